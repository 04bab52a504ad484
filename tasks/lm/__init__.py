"""Tiny causal language models for the LM papers (lambda-GRPO; MineDraft and BaLoRA build on it too).

The models are plain `transformers` models (GPT-2 or Llama architecture) built from a config and
initialised from a seed, so the field's tools work on them unchanged: `generate` (KV cache, assisted
generation), peft adapters, TRL losses. They are saved with `save_pretrained` (safetensors), never pickled.

- vocab.py: `TokenVocab`, a small task vocabulary with BOS/SEP/EOS/PAD, and `char_vocab` for text.
- model.py: `TinyLMConfig`, `build_model`, `save_model`, `load_model`, `num_parameters`.
- corpus.py: the stdlib-source character corpus (tasks.train.corpus) as ids of `char_vocab`.
- chain_arith.py: the noisy chain-arithmetic reasoning task (prompts, reference and noisy-teacher traces,
  exact answer checker).
- sequences.py: prompt + completion batches (right-padded) and the per-token log-probs of the completions.
- sampling.py: seeded sampling / greedy decoding of completions with `generate` (left-padded prompts).
- params.py: `TinyLMParams`, the typed architecture block of a paper's params.yaml.
- training.py: `TrainSetting`, `train_steps`: the AdamW loop (optional cosine schedule) the runs below share.
- sft.py: supervised fine-tuning on (prompt, completion) pairs, loss on completion tokens only.
- pretrain.py: corpus pre-training on random windows (`pretrain`), `next_token_nll`, fixed validation windows.
- speculative.py: lossless speculative decoding (rejection sampler, greedy rule, batched draft and verify).
- grpo.py: group-normalised advantages and the GRPO policy loss (clipped ratio, k3 KL, per-token weights,
  sequence-mean or token-mean aggregation), checked equal to TRL's.
"""
