"""Trains a draft head (head.py) for a GGUF model on a GPU with PyTorch, by
self-distillation: the target answers the prompt set (prompts.py) itself, greedily and
sampled, and the head learns the target's next hidden state and its next-token
distribution over the draft vocabulary (the tokens the answers use most), chained over a
few steps as the drafter runs it. Measures the held-out acceptance and writes the head
(config.json, model.safetensors) with its figures (training.json).

    python3 tools/draft_head/train.py --gguf SmolLM2-135M-Instruct.Q4_1.gguf --out head/ \
        --budget-seconds 550

(the shipped head's command: 7.5 minutes on one H100, training.json has the figures).

Needs torch, transformers, accelerate and gguf."""

import argparse
import json
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from head import DraftHead, cosine_lr  # noqa: E402
from prompts import prompt_sets  # noqa: E402


def log(*parts):
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, flush=True)


def load_target(gguf, device, dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = os.path.split(os.path.abspath(gguf))
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=dtype)
    model.to(device).eval().requires_grad_(False)
    return tokenizer, model


def encode(tokenizer, prompts):
    out = []
    for p in prompts:
        ids = tokenizer.apply_chat_template([{"role": "user", "content": p}],
                                            add_generation_prompt=True, tokenize=True)
        if hasattr(ids, "keys"):
            ids = ids["input_ids"]
        out.append(list(ids))
    return out


@torch.no_grad()
def generate(model, prompts, stop_ids, temperature, max_new, batch, device, seed):
    """Each prompt's ids followed by the target's answer (up to and with its stop token)."""
    torch.manual_seed(seed)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    sequences = [None] * len(prompts)
    pad = stop_ids[0]
    for start in range(0, len(order), batch):
        chunk = order[start:start + batch]
        width = max(len(prompts[i]) for i in chunk)
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, i in enumerate(chunk):  # left padding
            ids[row, width - len(prompts[i]):] = torch.tensor(prompts[i])
            mask[row, width - len(prompts[i]):] = 1
        sampled = temperature > 0
        out = model.generate(
            input_ids=ids.to(device), attention_mask=mask.to(device), max_new_tokens=max_new,
            do_sample=sampled, temperature=temperature if sampled else None,
            top_k=0 if sampled else None, top_p=1.0 if sampled else None,
            eos_token_id=stop_ids, pad_token_id=pad)
        for row, i in enumerate(chunk):
            answer = out[row, width:].tolist()
            for j, tok in enumerate(answer):
                if tok in stop_ids:
                    answer = answer[:j + 1]
                    break
            sequences[i] = (prompts[i] + answer, len(prompts[i]))
    return sequences


def batches(sequences, token_budget, rng):
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i][0]))
    out, current = [], []
    for i in order:
        width = len(sequences[i][0])
        if current and width * (len(current) + 1) > token_budget:
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
    rng.shuffle(out)
    return out


def pad_batch(sequences, rows, pad, device):
    width = max(len(sequences[i][0]) for i in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    lengths = torch.tensor([len(sequences[i][0]) for i in rows])
    prompt_lengths = torch.tensor([sequences[i][1] for i in rows])
    for row, i in enumerate(rows):
        ids[row, :len(sequences[i][0])] = torch.tensor(sequences[i][0])
    return ids.to(device), lengths.to(device), prompt_lengths.to(device)


@torch.no_grad()
def target_pass(model, ids):
    """The target's final normed hidden states and logits at every position (right padding
    reaches no real position under the causal mask)."""
    hiddens = model.model(input_ids=ids).last_hidden_state
    return hiddens, model.lm_head(hiddens)


def valid_positions(lengths, prompt_lengths, width, step):
    """[B, T - 1]: pair t predicts position t + 1's state and token t + 2 from within the
    answer, its token t + 1 exists, and a chain of `step` steps reaches back to t - step + 1."""
    t = torch.arange(width - 1, device=lengths.device)[None, :]
    return (t + 1 < lengths[:, None]) & (t >= step - 1) & (t + 1 >= prompt_lengths[:, None] - 1)


def head_inputs(model, ids, hiddens, noise):
    embedded = model.model.embed_tokens(ids[:, 1:])
    inputs = hiddens[:, :-1]
    if noise > 0:
        inputs = inputs + (torch.rand_like(inputs) * 2 - 1) * noise
    return embedded, inputs


def train(args, model, head, sequences, d2t, device, dtype):
    rng = random.Random(args.seed)
    draft_rows = model.lm_head.weight[d2t].detach()
    optimizer = torch.optim.AdamW(head.parameters(), lr=args.lr, weight_decay=0.0)
    pad = sequences[0][0][-1]
    step, began, history = 0, time.time(), []
    while step < args.steps:
        for rows in batches(sequences, args.batch_tokens, rng):
            if (step >= args.steps or time.time() - began > args.train_seconds
                    or time.time() > args.deadline):
                return step, history
            ids, lengths, prompt_lengths = pad_batch(sequences, rows, pad, device)
            hiddens, logits = target_pass(model, ids)
            target_probs = torch.softmax(logits.float(), -1)[..., d2t][:, 1:]
            embedded, inputs = head_inputs(model, ids, hiddens, args.noise)
            for group in optimizer.param_groups:
                group["lr"] = cosine_lr(step, args.steps, args.warmup, args.lr)
            with torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype != torch.float32):
                outputs = head.unrolled(embedded, inputs, args.unroll, model.model.norm, draft_rows)
            loss, parts = 0.0, []
            for k, (feature, draft_logits) in enumerate(outputs, start=1):
                valid = valid_positions(lengths, prompt_lengths, ids.shape[1], k)
                regression = F.smooth_l1_loss(feature.float(), hiddens[:, 1:].float(),
                                              reduction="none").mean(-1)
                log_q = torch.log_softmax(draft_logits.float(), -1)
                classification = -(target_probs * log_q).sum(-1)
                agree = (draft_logits.argmax(-1) == target_probs.argmax(-1)).float()
                weight = args.step_decay ** (k - 1)
                n = valid.sum().clamp(min=1)
                loss = loss + weight * ((regression * valid).sum() / n * args.regression_weight
                                        + (classification * valid).sum() / n)
                parts.append(((classification * valid).sum() / n, (agree * valid).sum() / n))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
            optimizer.step()
            if step % args.log_every == 0 or step == args.steps - 1:
                record = {"step": step, "loss": round(loss.item(), 4),
                          "seconds": round(time.time() - began, 1),
                          "ce_per_step": [round(c.item(), 3) for c, _ in parts],
                          "top1_per_step": [round(a.item(), 3) for _, a in parts]}
                history.append(record)
                log(json.dumps(record))
            step += 1
    return step, history


@torch.no_grad()
def evaluate(args, model, head, sequences, d2t, device, dtype, temperature):
    """Held-out committed tokens per verify round at each fixed depth: simulated exactly
    from the head's greedy drafts at temperature 0; at a temperature, the expectation
    1 + sum_k prod_{j<=k} alpha_j with alpha = sum_v min(p(v), q(v)) along the sampled answer."""
    draft_rows = model.lm_head.weight[d2t]
    depth = args.eval_depth
    pad = sequences[0][0][-1]
    per_depth_tokens = [0.0] * (depth + 1)
    per_depth_rounds = [0.0] * (depth + 1)
    for rows in batches(sequences, args.batch_tokens, random.Random(0)):
        ids, lengths, prompt_lengths = pad_batch(sequences, rows, pad, device)
        hiddens, logits = target_pass(model, ids)
        embedded, inputs = head_inputs(model, ids, hiddens, 0.0)
        with torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype != torch.float32):
            outputs = head.unrolled(embedded, inputs, depth, model.model.norm, draft_rows)
        if temperature == 0:
            # pair t drafts token t + 2
            truth = F.pad(ids[:, 2:], (0, 1), value=-1)
            scores = [(d2t[o[1].argmax(-1)] == truth).float() for o in outputs]
        else:
            p = torch.softmax(logits[:, 1:].float() / temperature, -1)[..., d2t]
            scores = [torch.minimum(p, torch.softmax(o[1].float() / temperature, -1)).sum(-1)
                      for o in outputs]
        scores = torch.stack(scores).cpu()  # [depth, B, T - 1]
        for row in range(len(rows)):
            length, prompt = lengths[row].item(), prompt_lengths[row].item()
            for d in range(1, depth + 1):
                tokens, rounds = _rounds(scores[:, row], prompt, length, d, temperature == 0)
                per_depth_tokens[d] += tokens
                per_depth_rounds[d] += rounds
    return {d: round(per_depth_tokens[d] / max(1, per_depth_rounds[d]), 3) for d in range(1, depth + 1)}


def _rounds(scores, prompt, length, depth, exact):
    """(tokens committed, verify rounds) over an answer, drafting `depth` each round."""
    tokens = rounds = 0.0
    n = prompt
    while n < length:
        expected, run = 1.0, 1.0
        for k in range(1, depth + 1):
            t = n - 3 + k
            if t + 2 >= length:
                break
            run *= scores[k - 1, t].item()
            if exact and run == 0:
                break
            expected += run
        if exact:
            committed = min(int(expected), length - n)
            n += committed
            tokens += committed
        else:  # the expectation at every start, one round each
            tokens += min(expected, length - n)
            n += 1
        rounds += 1
    return tokens, rounds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-prompts", type=int, default=0, help="0: all")
    parser.add_argument("--held-out-prompts", type=int, default=0, help="0: all")
    parser.add_argument("--max-new", type=int, default=256)
    parser.add_argument("--gen-batch", type=int, default=512)
    parser.add_argument("--sampled-temperatures", default="0.8",
                        help="one sampled answer per training prompt at each")
    parser.add_argument("--draft-vocab", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--train-seconds", type=float, default=300)
    parser.add_argument("--budget-seconds", type=float, default=0,
                        help="stop training in time to evaluate and write within this (0: none)")
    parser.add_argument("--batch-tokens", type=int, default=16384)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--unroll", type=int, default=3)
    parser.add_argument("--step-decay", type=float, default=0.8)
    parser.add_argument("--regression-weight", type=float, default=1.0)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--eval-depth", type=int, default=8)
    parser.add_argument("--log-every", type=int, default=100)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    began = time.time()
    args.deadline = began + args.budget_seconds - 60 if args.budget_seconds else float("inf")
    tokenizer, model = load_target(args.gguf, device, dtype)
    stop_ids = sorted({tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<|im_end|>")} - {None})
    train_prompts, held_prompts = prompt_sets(args.seed)
    if args.train_prompts:
        train_prompts = train_prompts[:args.train_prompts]
    if args.held_out_prompts:
        held_prompts = held_prompts[:args.held_out_prompts]
    train_ids, held_ids = encode(tokenizer, train_prompts), encode(tokenizer, held_prompts)
    log(f"target loaded in {time.time() - began:.1f} s; {len(train_ids)} training and "
        f"{len(held_ids)} held-out prompts")

    figures = {"gguf": os.path.basename(args.gguf), "arguments": vars(args),
               "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu"}
    t = time.time()
    gen = dict(stop_ids=stop_ids, max_new=args.max_new, batch=args.gen_batch, device=device)
    train_seqs = generate(model, train_ids, temperature=0, seed=args.seed, **gen)
    for i, temperature in enumerate(float(x) for x in args.sampled_temperatures.split(",")):
        train_seqs += generate(model, train_ids, temperature=temperature, seed=args.seed + 1 + i,
                               **gen)
    held_greedy = generate(model, held_ids, temperature=0, seed=args.seed, **gen)
    held_sampled = generate(model, held_ids, temperature=0.7, seed=args.seed + 2, **gen)
    train_seqs = [s for s in train_seqs if len(s[0]) - s[1] >= 2]
    answer_tokens = sum(len(s[0]) - s[1] for s in train_seqs)
    figures["generation"] = {"seconds": round(time.time() - t, 1), "sequences": len(train_seqs),
                             "answer_tokens": answer_tokens,
                             "tokens": sum(len(s[0]) for s in train_seqs)}
    log("generated", json.dumps(figures["generation"]))

    counts = torch.zeros(model.config.vocab_size, dtype=torch.long)
    for seq, prompt in train_seqs:
        counts += torch.bincount(torch.tensor(seq[prompt:]), minlength=model.config.vocab_size)
    d2t = torch.sort(torch.topk(counts, args.draft_vocab).indices).values
    held_counts = torch.zeros_like(counts)
    for seq, prompt in held_greedy + held_sampled:
        held_counts += torch.bincount(torch.tensor(seq[prompt:]), minlength=model.config.vocab_size)
    figures["draft_vocab"] = {"size": args.draft_vocab,
                              "held_out_coverage": round(held_counts[d2t].sum().item()
                                                         / max(1, held_counts.sum().item()), 4)}
    log("draft vocabulary", json.dumps(figures["draft_vocab"]))
    d2t = d2t.to(device)

    c = model.config
    head_config = {"architectures": ["HeronDraftHead"], "model_type": "heron_draft_head",
                   "hidden_size": c.hidden_size, "intermediate_size": c.intermediate_size,
                   "num_attention_heads": c.num_attention_heads,
                   "num_key_value_heads": c.num_key_value_heads,
                   "head_dim": getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads,
                   "rms_norm_eps": c.rms_norm_eps,
                   "rope_theta": getattr(c, "rope_theta", None)
                   or c.rope_parameters["rope_theta"],
                   "max_position_embeddings": c.max_position_embeddings,
                   "vocab_size": c.vocab_size, "draft_vocab_size": args.draft_vocab}
    head = DraftHead(head_config).to(device)
    last = model.model.layers[-1]
    with torch.no_grad():  # start the block from the target's last one
        for mine, theirs in ((head.q_proj, last.self_attn.q_proj), (head.k_proj, last.self_attn.k_proj),
                             (head.v_proj, last.self_attn.v_proj), (head.o_proj, last.self_attn.o_proj),
                             (head.gate_proj, last.mlp.gate_proj), (head.up_proj, last.mlp.up_proj),
                             (head.down_proj, last.mlp.down_proj),
                             (head.input_layernorm, last.input_layernorm),
                             (head.post_attention_layernorm, last.post_attention_layernorm)):
            mine.weight.copy_(theirs.weight.float())
    t = time.time()
    steps, history = train(args, model, head, train_seqs, d2t, device, dtype)
    figures["training"] = {"seconds": round(time.time() - t, 1), "steps": steps,
                           "history": history}
    log(f"trained {steps} steps in {time.time() - t:.1f} s")

    head.eval()
    t = time.time()
    figures["held_out"] = {
        "prompts": len(held_ids),
        "committed_per_round_temperature_0": evaluate(args, model, head, held_greedy, d2t,
                                                      device, dtype, 0),
        "committed_per_round_temperature_0.7": evaluate(args, model, head, held_sampled, d2t,
                                                        device, dtype, 0.7),
        "seconds": round(time.time() - t, 1)}
    log("held out", json.dumps(figures["held_out"]))
    head.save(args.out, d2t, {})
    figures["seconds"] = round(time.time() - began, 1)
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump(figures, f, indent=2)
        f.write("\n")
    log("wrote", args.out)


if __name__ == "__main__":
    main()
