# expect:
# seen-in: https://github.com/mit-han-lab/efficientvit/blob/de7d7733cc0329f391b33f1f459271562ec27bd5/applications/efficientvit_cls/train_efficientvit_cls_model.py
# The set-up and the barrier live in a package module that the package's __init__.py re-exports
# (`from .dist import *`), and the trainer that saves, waits and loads sits three folders deep in the package:
# the scan resolves the absolute import from the package root and the re-export, so the helper's barrier and
# set_device count where they are called.
from vitpkg.apps.trainer.base import Trainer
from vitpkg.utils import setup_dist_env


def main():
    setup_dist_env()
    trainer = Trainer("runs/exp")
    trainer.train(epochs=3)


if __name__ == "__main__":
    main()
