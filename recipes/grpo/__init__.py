"""TRL GRPO + LoRA on a refund-assistant policy: reward, prompts, trainer construction, Modal app."""
