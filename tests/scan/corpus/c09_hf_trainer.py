# expect: none
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
raw = load_dataset("imdb")
args = TrainingArguments("out", per_device_train_batch_size=16, num_train_epochs=1, gradient_checkpointing=True)
with args.main_process_first(desc="tokenize"):
    encoded = raw.map(lambda b: tokenizer(b["text"], truncation=True), batched=True)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"], tokenizer=tokenizer)
trainer.train()
trainer.save_model("out/final")
