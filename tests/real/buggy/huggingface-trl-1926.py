# expect: hf-cache-contention
# source: https://github.com/huggingface/trl/pull/1926
# reason: The example scripts ran their dataset.map preprocessing on every process of an accelerate launch at the same time; the merged fix runs it under PartialState().local_main_process_first() so the other processes load the cache the local main process wrote.
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser, Trainer, TrainingArguments


def main():
    (training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    tokenizer = AutoTokenizer.from_pretrained("distilroberta-base")
    model = AutoModelForSequenceClassification.from_pretrained("distilroberta-base", num_labels=1)
    raw_datasets = load_dataset("Anthropic/hh-rlhf")

    def preprocess_function(examples):
        chosen = tokenizer(examples["chosen"], truncation=True)
        rejected = tokenizer(examples["rejected"], truncation=True)
        return {"input_ids_chosen": chosen["input_ids"], "input_ids_rejected": rejected["input_ids"]}

    raw_datasets = raw_datasets.map(preprocess_function, batched=True, num_proc=4)
    trainer = Trainer(model=model, args=training_args, train_dataset=raw_datasets["train"],
                      eval_dataset=raw_datasets["test"], tokenizer=tokenizer)
    trainer.train()


if __name__ == "__main__":
    main()
