"""SFT + LoRA on the file export_sft writes, with a paired before/after verdict."""
