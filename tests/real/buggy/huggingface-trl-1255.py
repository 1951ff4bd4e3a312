# expect: hf-cache-contention
# source: https://github.com/huggingface/trl/pull/1255
# reason: The SFT trainer tokenised its dataset with dataset.map on every process at once against the same datasets cache; the merged fix wraps the preparation in PartialState().local_main_process_first() so one process per node builds the cache and the others read it.
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


class SFTTrainer(Trainer):
    def __init__(self, model, args, train_dataset, tokenizer, dataset_text_field="text", max_seq_length=1024):
        train_dataset = self._prepare_dataset(train_dataset, tokenizer, dataset_text_field, max_seq_length)
        super().__init__(model=model, args=args, train_dataset=train_dataset, tokenizer=tokenizer)

    def _prepare_dataset(self, dataset, tokenizer, dataset_text_field, max_seq_length):
        def tokenize(element):
            return tokenizer(element[dataset_text_field], truncation=True, max_length=max_seq_length)

        return dataset.map(tokenize, batched=True, remove_columns=dataset.column_names)


if __name__ == "__main__":
    training_args = TrainingArguments(output_dir="sft-out", per_device_train_batch_size=8)
    tokenizer = AutoTokenizer.from_pretrained("facebook/opt-350m")
    model = AutoModelForCausalLM.from_pretrained("facebook/opt-350m")
    dataset = load_dataset("imdb", split="train")
    SFTTrainer(model, training_args, dataset, tokenizer).train()
