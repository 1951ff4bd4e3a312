# expect: hf-cache-contention
# source: https://github.com/huggingface/trl/pull/3106
# reason: Every process ran the dataset preparation (`dataset.map` for the chat template and tokenisation) at the same time against the same datasets cache, which raced on runs over many nodes; the merged fix runs the mapping on the main process first and lets the others read its cache.
from datasets import load_from_disk
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


class ChatTrainer(Trainer):
    def __init__(self, model, args, train_dataset, tokenizer, max_length=2048):
        self.max_length = max_length
        train_dataset = self._prepare_dataset(train_dataset, tokenizer)
        super().__init__(model=model, args=args, train_dataset=train_dataset, tokenizer=tokenizer)

    def _prepare_dataset(self, dataset, tokenizer):
        dataset = dataset.map(
            lambda ex: {"text": tokenizer.apply_chat_template(ex["messages"], tokenize=False)},
            desc="Applying chat template to train dataset",
        )
        return dataset.map(
            lambda ex: tokenizer(ex["text"], truncation=True, max_length=self.max_length),
            batched=True, remove_columns=dataset.column_names, desc="Tokenizing train dataset",
        )


def main():
    args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, num_train_epochs=1, bf16=True)
    tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
    trainer = ChatTrainer(model, args, load_from_disk("data/chat"), tokenizer)
    trainer.train()


if __name__ == "__main__":
    main()
