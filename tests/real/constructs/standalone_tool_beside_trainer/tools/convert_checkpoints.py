import argparse

import torch


def convert(path, output):
    state = torch.load(path, map_location="cpu")
    renamed = {key.replace("backbone.", "encoder."): value for key, value in state.items()}
    torch.save(renamed, output)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--output", default="converted.pth")
    args = parser.parse_args()
    convert(args.path, args.output)
