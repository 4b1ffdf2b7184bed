"""The draft head in PyTorch, as heron runs it (src/heron/model/layers/draft_head.cpp): the
embedding of token t + 1 and the target's final (normed) hidden state at t, side by side
through fc, one llama decoder block with its own attention, then the target's own final
norm and its output head restricted to the draft vocabulary (d2t: draft id -> target id).
Its output feature stands in for the target's hidden state at t + 1 when it drafts on."""

import json
import math
import os

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (x32 * self.weight.float()).to(x.dtype)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class DraftHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        h, i = config["hidden_size"], config["intermediate_size"]
        self.heads, self.kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
        self.head_dim = config["head_dim"]
        eps = config["rms_norm_eps"]
        self.fc = nn.Linear(2 * h, h, bias=False)
        self.input_layernorm = RMSNorm(h, eps)
        self.post_attention_layernorm = RMSNorm(h, eps)
        self.q_proj = nn.Linear(h, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, h, bias=False)
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)
        inv_freq = 1.0 / (config["rope_theta"] ** (
            torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def rope(self, x, positions):
        angles = positions[:, None].float() * self.inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        return x * cos + rotate_half(x) * sin

    def unrolled(self, embedded, hiddens, steps, final_norm, draft_rows):
        """Runs `steps` draft steps at every position of [B, T] sequences at once, as the
        drafter chains them: step 1 reads the target's hidden state at t; step k reads step
        k - 1's output at t - 1 and attends to the target's pairs up to t - k + 1 and to its
        own chain's pairs after them. -> a list of (output feature, draft logits) per step."""
        b, t, _ = embedded.shape
        positions = torch.arange(t, device=embedded.device)
        keys, values, outputs = [], [], []
        hidden = hiddens
        for step in range(1, steps + 1):
            x = self.fc(torch.cat((embedded, hidden), dim=-1))
            n = self.input_layernorm(x)
            q = self.q_proj(n).view(b, t, self.heads, self.head_dim).transpose(1, 2)
            k = self.k_proj(n).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
            v = self.v_proj(n).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
            q, k = self.rope(q, positions), self.rope(k, positions)
            keys.append(k)
            values.append(v)
            attention = F.scaled_dot_product_attention(
                q, torch.cat(keys, dim=2), torch.cat(values, dim=2),
                attn_mask=chain_mask(t, step, embedded.device), enable_gqa=True)
            x = x + self.o_proj(attention.transpose(1, 2).reshape(b, t, -1))
            n = self.post_attention_layernorm(x)
            x = x + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))
            feature = final_norm(x)
            outputs.append((feature, feature @ draft_rows.T))
            hidden = F.pad(feature[:, :-1], (0, 0, 1, 0))  # step k + 1 at t reads t - 1
        return outputs

    def save(self, directory, d2t, extra_config):
        from safetensors.torch import save_file

        os.makedirs(directory, exist_ok=True)
        tensors = {"fc.weight": self.fc.weight}
        layer = "layers.0."
        for name in ("input_layernorm", "post_attention_layernorm"):
            tensors[layer + name + ".weight"] = getattr(self, name).weight
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            tensors[layer + "self_attn." + name + ".weight"] = getattr(self, name).weight
        for name in ("gate_proj", "up_proj", "down_proj"):
            tensors[layer + "mlp." + name + ".weight"] = getattr(self, name).weight
        tensors = {k: v.detach().to(torch.float16).contiguous().cpu() for k, v in tensors.items()}
        tensors["d2t"] = d2t.to(torch.int32).contiguous().cpu()
        save_file(tensors, os.path.join(directory, "model.safetensors"))
        config = dict(self.config, **extra_config)
        with open(os.path.join(directory, "config.json"), "w") as f:
            json.dump(config, f, indent=2, sort_keys=True)
            f.write("\n")


def chain_mask(t, step, device):
    """[T, step * T] bool: query t of step `step` sees step 1's keys up to t - step + 1 and
    step j's key at t - (step - j) for 1 < j <= step."""
    query = torch.arange(t, device=device)[:, None]
    key = torch.arange(t, device=device)[None, :]
    parts = [key <= query - step + 1]
    for j in range(2, step + 1):
        parts.append(key == query - (step - j))
    return torch.cat(parts, dim=1)


def cosine_lr(step, total, warmup, peak, floor=0.05):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))
