"""TRL DPO + LoRA on the refund assistant: on-policy pairs scored by the GRPO recipe's reward."""
