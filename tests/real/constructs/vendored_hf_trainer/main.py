# expect:
# seen-in: https://github.com/THUDM/ChatGLM-6B/blob/401bf3a8a7dd8a26fba189551dccfc61a7079b4e/ptuning/main.py
# The project keeps its own copy of the HF Trainer (trainer.py, to patch a few methods) and subclasses it: the
# copy shards the loaders, places and wraps the model as the Trainer does, and the entry point loads from the Hub
# as every HF Trainer script does. Nothing here is raw DDP written by the project.
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, HfArgumentParser, Seq2SeqTrainingArguments

from seq2seq_trainer import Seq2SeqTrainer


def main():
    (args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()
    tokenizer = AutoTokenizer.from_pretrained("t5-small")
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    texts = [tokenizer(f"summarize: item {i}")["input_ids"] for i in range(64)]
    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=texts, tokenizer=tokenizer)
    trainer.train()


if __name__ == "__main__":
    main()
