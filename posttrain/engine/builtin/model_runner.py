"""The forward pass over a paged KV cache, for the Llama-shaped families of model_families.py.

The weights and every layer except attention are the Hugging Face model's own modules (norms,
projections, rotary embedding, MLP), computed as `transformers` computes them, with the
linear layers switched to oneDNN (onednn_linear.py): the trainer recomputes logprobs through
the same modules, switched the same way, so engine and trainer share kernels. A decode step is
a few rows, so its cost is mostly dispatch: the RMSNorms and the rotation run their arithmetic
op for op without the module calls and no-op casts, and q and k rotate in one pass (_rms_norm,
_rotate; the same bits, tests/engine/test_decode_step_ops.py). Attention reads keys and values
from the paged cache:

    k_cache[layer]: [kv_heads, num_blocks * block_size, head_dim]   (slot = block * size + offset)

Heads first: gathering a decode batch's blocks gives [kv_heads, batch, context, head_dim] in one
copy, already in the layout the attention GEMMs read.

Decoding sequences are batched into one attention call over their keys in the DecodeCache (one
contiguous row per sequence, kept across steps; when it would outgrow its memory budget, their
blocks are gathered from the paged cache instead); a prefix that every one of them holds in
the same physical blocks (a shared system prompt, the samples of one prompt) is read from one
row for all (SharedPrefix); where the start-up probe allows, that call is one native call for the
scores and one for the values instead of two GEMMs per sequence and head, with the same bits
(fast_attention.py), reading the queries from the step's rows and writing the output to them
in place, and the rotation of q and k with the writes of the step's keys and values to both
caches is one native pass over the stacked projection (rope_cache_write, _rotate's bits); a
decoding sequence verifying a speculative
draft brings several queries to that call, each seeing the keys up to its own position; prefill
chunks attend causally to their own cached prefix. Attention is `invariant_attention`,
which the trainer's model also uses: a token's logprob comes out the same to the bit whether it
was computed in a decode step or in the trainer's full-sequence forward.

Sliding-window layers (Mistral; Qwen2/3 where configured) use the same attention calls with the
keys that fell out of the window masked: masked keys add exact zeros, as in the trainer's
sliding-window mask, so the bits do not change.

With kv_cache_dtype = "int8" (kv_quant.py) both caches hold int8 keys and values with a scale
per token and head, the keys rotated by a fixed orthogonal matrix (and the queries by the same
one as they are read): the step's q, k and v come from torch's rotation (not the fused pass),
are quantized and written to both caches in one native call each (fast_attention.quantize_write;
torch where the kernel is unavailable), the decode kernel reads int8 and applies the scales as
it reads, and the prefill and gather paths dequantize what they read. Not the trainer's bits:
the logprob mismatch is reported, as for any lossy engine. Reading a shared prefix once and the
compiled step are float32-only.
"""

from __future__ import annotations

import copy
import functools
import logging

import torch

from posttrain.engine.builtin import compiled_step, fast_attention, kv_quant, onednn_linear
from posttrain.engine.builtin.concatenated_linear import ConcatenatedLinear, can_concatenate, columns_agree
from posttrain.engine.builtin.decode_cache import DecodeCache
from posttrain.engine.builtin.invariant_attention import SharedPrefix, attend_rows, excluded_keys
from posttrain.engine.builtin.model_families import attention_windows, check_supported
from posttrain.engine.builtin.row_invariance import RowInvariance, prefix_sharing_min_tail, probe_model
from posttrain.engine.builtin.scheduler import ScheduledChunk
from posttrain.errors import PosttrainError

# a decode batch's shared prompt prefix is read once when it is at least this long: below it the
# few extra calls cost more than the keys and values they save reading
MIN_SHARED_PREFIX = 64

log = logging.getLogger(__name__)


class ModelRunner:
    def __init__(
        self,
        model: torch.nn.Module,
        num_blocks: int,
        block_size: int,
        decode_cache_bytes: int | None = None,
        invariance: RowInvariance | None = None,
        compile_step: bool = False,
        kv_cache_dtype: str = "auto",
    ) -> None:
        """compile_step: run the decoder layers as one torch.compile graph (compiled_step.py):
        faster, row-invariant, but no longer the trainer's bits; for serving, never for RL.
        kv_cache_dtype: "auto"/"fp32" (the model's dtype) or "int8" (kv_quant.py)."""
        self.family = check_supported(model.config)  # before anything runs: wrong logits are silent
        self.windows = attention_windows(model.config)
        self.model = model.eval()
        # calls whose row count the kernels would round differently are padded (row_invariance.py)
        self.invariance = invariance or probe_model(model)
        config = model.config
        self.block_size = block_size
        self.num_layers = config.num_hidden_layers
        self.num_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self.dtype = next(model.parameters()).dtype
        self.quantized = kv_quant.is_int8(kv_cache_dtype)
        if self.quantized and compile_step:
            raise PosttrainError(
                "[engine] kv_cache_dtype = 'int8' does not run with the compiled step (it writes float32 caches): "
                "drop one of them"
            )
        cache_dtype = torch.int8 if self.quantized else self.dtype
        self.scratch_slot = num_blocks * block_size  # one extra block: where padding rows write their KV
        shape = (self.num_layers, self.num_kv_heads, (num_blocks + 1) * block_size, self.head_dim)
        self.k_cache = torch.zeros(shape, dtype=cache_dtype)
        self.v_cache = torch.zeros(shape, dtype=cache_dtype)
        self.k_layers, self.v_layers = self.k_cache.unbind(0), self.v_cache.unbind(0)  # views, made once
        # int8: each slot's scale per kv head, [layers, kv, slots]
        self.k_scale = torch.ones(shape[:3]) if self.quantized else None
        self.v_scale = torch.ones(shape[:3]) if self.quantized else None
        self.scales = (self.k_scale, self.v_scale) if self.quantized else None
        # int8: keys stored rotated, queries rotated as they are read (kv_quant.key_rotation);
        # settable to None before the first step (benchmarks/kv_int8.py compares the two)
        self.key_rotation = kv_quant.key_rotation(self.head_dim) if self.quantized else None
        per_head = self.head_dim * cache_dtype.itemsize + (kv_quant.SCALE_BYTES if self.quantized else 0)
        self.kv_bytes_per_token = 2 * self.num_layers * self.num_kv_heads * per_head  # keys and values
        paged_bytes = self.kv_bytes_per_token * shape[2]
        self.decode_cache = DecodeCache(
            self.num_layers,
            self.num_kv_heads,
            self.head_dim,
            cache_dtype,
            block_size,
            decode_cache_bytes if decode_cache_bytes is not None else 2 * paged_bytes,
        )
        self.qkv, self.gate_up = _concatenated_projections(model, self.dtype)
        # one row would take oneDNN's matrix-vector path, which each linear call pads to two
        # rows (onednn_linear._onednn): a step of one row is padded once here instead. Not with
        # int8 layers, whose input scale a padding row would change (quantization.py)
        linears = [m for m in model.modules() if hasattr(m, "in_features")]
        all_onednn = onednn_linear.AVAILABLE and all(isinstance(m, onednn_linear.OneDNNLinear) for m in linears)
        self.min_rows = 2 if all_onednn else 1
        self.norm = _rms_norm if _norms_agree(model, self.dtype) else _module_call
        acts = {type(layer.mlp.act_fn).__name__ for layer in model.model.layers}
        self.act = torch.nn.functional.silu if acts <= {"SiLU", "SiLUActivation"} else None
        group = self.num_heads // self.num_kv_heads
        # None: reading a shared prefix once would change bits here, so every row reads its own
        self.shared_prefix_min_tail = (
            None if self.quantized else prefix_sharing_min_tail(self.num_kv_heads, group, self.head_dim, self.dtype)
        )
        self.shared_prefix_steps = 0  # decode steps that read a prompt prefix once for the batch
        unavailable = fast_attention.agrees(self.num_kv_heads, group, self.head_dim, self.dtype)
        if unavailable is not None:
            log.info("the decode attention runs as GEMMs: %s", unavailable)
        self.native_attention = unavailable is None  # settable: benchmarks compare the two paths
        self.native_prefill = True  # prefill chunks on the kernel too (where native_attention); settable
        # the rotation and the cache writes in one native pass, where it gives _rotate's bits
        self.fused_rope = (
            self.native_attention
            and not self.quantized
            and _fused_rope_agrees(self.num_heads, self.num_kv_heads, self.head_dim)
        )
        self.compiled = None
        if compile_step:
            try:
                self.compiled = compiled_step.CompiledStack(self)
            except compiled_step.UnsupportedModelError as reason:
                log.warning("the decode step runs eagerly: %s", reason)

    @torch.inference_mode()
    def run(self, chunks: list[ScheduledChunk]) -> torch.Tensor:
        """Compute the scheduled tokens; returns float32 logits, in chunk order, for each chunk
        that completes its sequence: one row, or 1 + num_draft rows for a chunk with drafts (the
        last known token's and each draft token's)."""
        ids, positions, slots, logit_rows = [], [], [], []
        for chunk in chunks:
            seq, start = chunk.seq, chunk.seq.num_computed_tokens
            known = len(seq)
            for pos in range(start, start + chunk.num_tokens):
                ids.append(seq.token_ids[pos] if pos < known else seq.draft[pos - known])
                positions.append(pos)
                slots.append(seq.block_table[pos // self.block_size] * self.block_size + pos % self.block_size)
            if chunk.completes:
                logit_rows.extend(range(len(ids) - 1 - chunk.num_draft, len(ids)))
        padding = max(self.invariance.padded_rows(len(ids)), self.min_rows) - len(ids)
        ids += [0] * padding
        positions += [0] * padding
        slots += [self.scratch_slot] * padding
        input_ids = torch.tensor([ids])
        position_ids = torch.tensor([positions])
        slot_mapping = torch.tensor(slots)
        inner = self.model.model
        hidden = inner.embed_tokens(input_ids)
        rotation = _rotation(*inner.rotary_emb(hidden, position_ids))
        plan = _AttentionPlan(chunks, self.block_size, padded=padding > 0)
        plan.use_decode_cache(self.decode_cache, self.k_cache, self.v_cache, self.shared_prefix_min_tail, self.scales)
        if self._fuses_rope(rotation):
            plan.place_tokens(len(ids))
        elif self.quantized and self.native_attention:
            plan.mark_destinations(len(ids))  # for the native quantized write
        self.shared_prefix_steps += bool(plan.cache_shared)
        layers_out = None
        if self.compiled is not None:
            layers_out = self.compiled(hidden, rotation, slot_mapping, plan)
            if layers_out is None:  # its compilation failed: eager from now on
                self.compiled = None
        hidden = layers_out if layers_out is not None else self._layers(hidden, rotation, slot_mapping, plan)
        if not logit_rows:
            return torch.empty(0, self.model.config.vocab_size)
        count = max(self.invariance.padded_rows(len(logit_rows)), self.min_rows)
        rows = logit_rows + logit_rows[:1] * (count - len(logit_rows))
        return self.model.lm_head(hidden[0, rows]).float()[: len(logit_rows)]

    def _layers(self, hidden, rotation, slot_mapping, plan: _AttentionPlan) -> torch.Tensor:
        """The decoder layers and the final norm, eagerly: the trainer's arithmetic to the bit."""
        inner = self.model.model
        # q/k/v and gate/up as one call each at every row count: 1.08x per token at 1 and 4
        # decoding sequences (benchmarks/decode_step.py), 1.065x per decode step at 16 (steps
        # alternating in one process), 3-4% on the projections at 64 and 512 rows
        qkv, gate_up = self.qkv, self.gate_up
        for layer_index, layer in enumerate(inner.layers):
            residual = hidden
            hidden = self.norm(layer.input_layernorm, hidden)
            hidden = self._attention(
                layer.self_attn,
                layer_index,
                hidden,
                rotation,
                slot_mapping,
                plan.window(self.windows[layer_index]),
                qkv[layer_index] if qkv else None,
            )
            hidden = residual + hidden
            residual = hidden
            hidden = self.norm(layer.post_attention_layernorm, hidden)
            if gate_up is None:
                hidden = layer.mlp(hidden)
            else:  # as LlamaMLP computes it, gate and up from one call
                gate, up = gate_up[layer_index](hidden)
                hidden = layer.mlp.down_proj((self.act or layer.mlp.act_fn)(gate) * up)
            hidden = residual + hidden
        return self.norm(inner.norm, hidden)

    def copy_block(self, source: int, destination: int) -> None:
        """Copy one block's keys and values in every layer (copy-on-write of a forked sample)."""
        size = self.block_size
        src, dst = slice(source * size, (source + 1) * size), slice(destination * size, (destination + 1) * size)
        for cache in (self.k_cache, self.v_cache, *(self.scales or ())):
            cache[:, :, dst] = cache[:, :, src]

    def _rotated_together(self, together: torch.Tensor, rotation: tuple) -> tuple:
        """q, k, v [1, heads, tokens, dim] from the stacked q/k/v output [1, tokens, (heads +
        2 kv) * dim]: the query and key heads, adjacent there, rotated in one pass (_rotation)."""
        total, dim, heads = together.shape[1], self.head_dim, self.num_heads
        rotated = heads + self.num_kv_heads
        qk = together[..., : rotated * dim].view(1, total, rotated, dim).transpose(1, 2)
        qk = _rotate(qk, rotation)
        v = together[..., rotated * dim :].view(1, total, self.num_kv_heads, dim).transpose(1, 2)
        return qk[:, :heads], qk[:, heads:], v

    def _fuses_rope(self, rotation: tuple) -> bool:
        """This step's layers rotate and write the caches in the native pass: the probe agreed,
        the projections are stacked without per-head norms, and the angles are one contiguous
        full-width row a token (a family with a partial rotary dimension keeps the torch ops)."""
        cos, signed_sin = rotation
        return (
            self.fused_rope
            and self.native_attention
            and self.qkv is not None
            and not self.family.qk_norm
            and cos.shape[-1] == self.head_dim
            and cos.is_contiguous()
            and signed_sin.is_contiguous()
        )

    def _attention(self, attn, layer_index, hidden, rotation, slot_mapping, plan: _AttentionPlan, qkv=None):
        total = hidden.shape[1]
        if plan.fused_rope and qkv is not None:
            cos, signed_sin = rotation
            together = qkv.stacked(hidden)
            if together is not None:
                destination = None
                if plan.cache_rows is not None:
                    destination = (
                        plan.cache_destination_rows, plan.cache_destination_positions,
                        plan.cache_k_t[layer_index], plan.cache_v[layer_index],
                    )  # fmt: skip
                q = fast_attention.rope_cache_write(
                    together[0], cos[0, 0], signed_sin[0, 0], self.num_heads, slot_mapping,
                    self.k_layers[layer_index], self.v_layers[layer_index], destination,
                )  # fmt: skip
                out = self._attend_written(layer_index, q, plan, attn.scaling)
                return attn.o_proj(out.view(1, total, -1))
        q, k, v = self._project(attn, hidden, rotation, qkv)
        out = self.attend(layer_index, q, k, v, slot_mapping, plan, attn.scaling)
        return attn.o_proj(out.reshape(1, total, -1))

    def _project(self, attn, hidden, rotation, qkv=None) -> tuple:
        """q, k, v [1, heads, tokens, dim] of a layer's input, q and k rotated."""
        total = hidden.shape[1]
        together = qkv.stacked(hidden) if qkv is not None and not self.family.qk_norm else None
        if together is not None:
            q, k, v = self._rotated_together(together, rotation)
        else:
            q, k, v = (attn.q_proj(hidden), attn.k_proj(hidden), attn.v_proj(hidden)) if qkv is None else qkv(hidden)
            q = q.view(1, total, -1, self.head_dim)
            k = k.view(1, total, -1, self.head_dim)
            if self.family.qk_norm:  # per head, before the rotation (Qwen3)
                q, k = attn.q_norm(q), attn.k_norm(k)
            q, k = q.transpose(1, 2), k.transpose(1, 2)
            v = v.view(1, total, -1, self.head_dim).transpose(1, 2)
            q, k = _rotate(q, rotation), _rotate(k, rotation)
        return q, k, v

    def attend(self, layer_index, q, k, v, slot_mapping, plan: _AttentionPlan, scaling: float) -> torch.Tensor:
        """Write the step's keys and values into the caches and attend: [tokens, heads, dim]."""
        if self.quantized:
            self._write_quantized(layer_index, k[0], v[0], slot_mapping, plan)
            return self._attend_written(layer_index, q[0].transpose(0, 1), plan, scaling)
        k_cache, v_cache = self.k_layers[layer_index], self.v_layers[layer_index]
        k_cache[:, slot_mapping] = k[0]
        v_cache[:, slot_mapping] = v[0]
        if plan.cache_rows is not None:
            tokens = plan.cache_token_rows
            cache_k_t, cache_v = plan.cache_k_t[layer_index], plan.cache_v[layer_index]
            if self.native_attention:
                fast_attention.write_decode_cache(
                    k[0], v[0], tokens, plan.cache_row_ids, plan.cache_positions, cache_k_t, cache_v
                )
            else:
                cache_k_t[plan.cache_row_ids, :, :, plan.cache_positions] = k[0][:, tokens].transpose(0, 1)
                cache_v[plan.cache_row_ids, :, plan.cache_positions] = v[0][:, tokens].transpose(0, 1)
        return self._attend_written(layer_index, q[0].transpose(0, 1), plan, scaling)

    def _write_quantized(self, layer_index, k, v, slot_mapping, plan: _AttentionPlan) -> None:
        """attend's cache writes for the int8 cache: k, v [kv, tokens, dim] quantized once, written
        with their scales to the paged cache and the step's DecodeCache rows."""
        if self.key_rotation is not None:
            k = k @ self.key_rotation
        if self.native_attention:  # quantized and written in one native call each
            for keys, x, cache, scales in (
                (True, k, self.k_layers, self.k_scale),
                (False, v, self.v_layers, self.v_scale),
            ):
                destination = None
                if plan.cache_rows is not None:
                    rows, row_scales = (
                        (plan.cache_k_t, plan.cache_k_scale) if keys else (plan.cache_v, plan.cache_v_scale)
                    )
                    destination = (
                        plan.cache_destination_rows, plan.cache_destination_positions,
                        rows[layer_index], row_scales[layer_index], keys,
                    )  # fmt: skip
                fast_attention.quantize_write(x, slot_mapping, cache[layer_index], scales[layer_index], destination)
            return
        (k8, k_scale), (v8, v_scale) = kv_quant.quantize(k), kv_quant.quantize(v)
        self.k_layers[layer_index][:, slot_mapping] = k8
        self.v_layers[layer_index][:, slot_mapping] = v8
        self.k_scale[layer_index][:, slot_mapping] = k_scale
        self.v_scale[layer_index][:, slot_mapping] = v_scale
        if plan.cache_rows is not None:
            tokens, rows, positions = plan.cache_token_rows, plan.cache_row_ids, plan.cache_positions
            plan.cache_k_t[layer_index][rows, :, :, positions] = k8[:, tokens].transpose(0, 1)
            plan.cache_v[layer_index][rows, :, positions] = v8[:, tokens].transpose(0, 1)
            plan.cache_k_scale[layer_index][rows, :, positions] = k_scale[:, tokens].transpose(0, 1)
            plan.cache_v_scale[layer_index][rows, :, positions] = v_scale[:, tokens].transpose(0, 1)

    def _attend_written(self, layer_index, q, plan: _AttentionPlan, scaling: float) -> torch.Tensor:
        """attend's attention once the step's keys and values are in the caches: q [tokens,
        heads, dim] (rotated), returns [tokens, heads, dim]."""
        if self.key_rotation is not None:  # the int8 cache's keys are stored rotated
            q = q @ self.key_rotation
        k_cache, v_cache = self.k_layers[layer_index], self.v_layers[layer_index]
        out = torch.zeros_like(q) if plan.padded else torch.empty_like(q)
        kv, group, dim = self.num_kv_heads, self.num_heads // self.num_kv_heads, self.head_dim
        if plan.cache_rows is not None:
            # each decoding sequence's keys in its own DecodeCache row: keys transposed
            # [rows, kv, dim, capacity], values [rows, kv, capacity, dim]; a sequence verifying a
            # draft has n > 1 queries (padded to the batch's longest), each seeing the keys up to
            # its own position, as in a causal pass
            batch, width, n = len(plan.cache_rows), plan.cache_width, plan.cache_queries
            cache_k_t, cache_v = plan.cache_k_t[layer_index], plan.cache_v[layer_index]
            scales = None
            if self.quantized:
                scales = (plan.cache_k_scale[layer_index], plan.cache_v_scale[layer_index])
            if self.native_attention and width >= fast_attention.MIN_WIDTH:
                # from the step's query rows straight into out's (the real queries'; padding's stay)
                fast_attention.decode_attention_tokens(
                    q, plan.cache_query_index.view(batch, n), cache_k_t, cache_v, plan.cache_limit, group, width,
                    scaling, plan.cache_common, plan.sliding_window, plan.cache_counts, out, scales,
                )  # fmt: skip
            else:
                if n == 1:
                    rows = q[plan.cache_rows].view(batch * kv, group, dim)
                else:  # rows g * n + t of each (sequence, kv head), as the prefill path orders them
                    rows = q[plan.cache_query_index].view(batch, n, kv, group, dim).permute(0, 2, 3, 1, 4)
                    rows = rows.reshape(batch * kv, group * n, dim)
                # views (rows are compact); keys as [N, width, dim] whose transpose is row-major
                keys, values = cache_k_t[:batch, :, :, :width], cache_v[:batch, :, :width]
                if scales is not None:  # int8 rows dequantized (the kernel's work where it runs)
                    keys = keys.float() * scales[0][:batch, :, None, :width]
                    values = kv_quant.dequantize(values, scales[1][:batch, :, :width])
                keys = keys.reshape(batch * kv, dim, width).transpose(-1, -2)
                values = values.reshape(batch * kv, width, dim)
                shared = None
                if plan.cache_shared:  # the batch's common prompt prefix, the same in every row: row 0's
                    length = plan.cache_shared
                    shared = SharedPrefix(cache_k_t[0, :, :, :length], cache_v[0, :, :length], batch)
                result = attend_rows(rows, keys, values, None, scaling, plan.cache_excluded(kv, group), shared)
                if n == 1:
                    out[plan.cache_rows] = result.reshape(batch, -1, dim)
                else:
                    result = result.view(batch, kv, group, n, dim).permute(0, 3, 1, 2, 4).reshape(batch * n, -1, dim)
                    out[plan.cache_token_rows] = result[plan.cache_valid]
        elif plan.decode_rows is not None:
            # whole blocks gathered in one copy: [kv, batch, width * block, dim]
            batch, width = plan.decode_tables.shape
            blocked = (kv, -1, self.block_size, dim)
            keys = k_cache.view(blocked)[:, plan.decode_tables].reshape(kv * batch, width * self.block_size, dim)
            values = v_cache.view(blocked)[:, plan.decode_tables].reshape(kv * batch, width * self.block_size, dim)
            if self.quantized:
                tables, scale_blocks = plan.decode_tables, (kv, -1, self.block_size)
                k_scale = self.k_scale[layer_index].view(scale_blocks)[:, tables].reshape(kv * batch, -1)
                v_scale = self.v_scale[layer_index].view(scale_blocks)[:, tables].reshape(kv * batch, -1)
                keys, values = kv_quant.dequantize(keys, k_scale), kv_quant.dequantize(values, v_scale)
            rows = q[plan.decode_rows].view(batch, kv, group, dim).transpose(0, 1).reshape(kv * batch, group, dim)
            result = attend_rows(
                rows, keys, values, None, scaling, plan.decode_excluded(kv, group)
            )  # [kv * batch, group, dim]
            out[plan.decode_rows] = result.view(kv, batch, group, dim).transpose(0, 1).reshape(batch, -1, dim)
        for rows_index, slots, mask in plan.prefills:
            n, context = mask.shape
            keys, values = k_cache[:, slots], v_cache[:, slots]  # [kv, context, dim]
            if self.quantized:
                keys = kv_quant.dequantize(keys, self.k_scale[layer_index][:, slots])
                values = kv_quant.dequantize(values, self.v_scale[layer_index][:, slots])
            if self.native_prefill and self.native_attention and context >= fast_attention.MIN_WIDTH:
                # the kernel's causal rows: query t sees keys up to context - n + t, masked keys
                # skipped rather than computed and filled (about half of a fresh prompt's)
                fast_attention.decode_attention_tokens(
                    q, rows_index[None], keys.transpose(1, 2).contiguous()[None], values[None],
                    (context - n + torch.arange(n))[None], group, context, scaling, 0, plan.sliding_window, None, out,
                )  # fmt: skip
                continue
            rows = q[rows_index].view(n, kv, group, dim).permute(1, 2, 0, 3).reshape(kv, group * n, dim)
            mask = mask.view(1, 1, n, -1).expand(kv, group, n, -1).reshape(kv, group * n, -1)
            result = attend_rows(rows, keys, values, mask, scaling)  # rows g * n + t, as the trainer's
            out[rows_index] = result.view(kv, group, n, dim).permute(2, 0, 1, 3).reshape(n, -1, dim)
        return out


def _rotation(cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [1, 1, tokens, dim] for _rotate, made once a step: sin with its first half negated."""
    half = sin.shape[-1] // 2
    return cos.unsqueeze(1), torch.cat((-sin[..., :half], sin[..., half:]), dim=-1).unsqueeze(1)


def _rotate(x: torch.Tensor, rotation: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """apply_rotary_pos_emb's x * cos + rotate_half(x) * sin, in 4 ops instead of 7 and to the
    bit: rotate_half(x) is [-x2, x1], roll(x) is [x2, x1], and (-a) * b == a * (-b) exactly in
    IEEE arithmetic (x [1, heads, tokens, dim])."""
    cos, signed_sin = rotation
    return (x * cos) + (torch.roll(x, x.shape[-1] // 2, -1) * signed_sin)


@functools.cache
def _fused_rope_agrees(heads: int, kv_heads: int, dim: int) -> bool:
    """fast_attention.rope_cache_write gives _rotated_together's queries and keys (and writes
    the values) to the bit on this CPU: checked once on random projections and angles."""
    if dim % 2:
        return False
    generator = torch.Generator().manual_seed(11)
    tokens, slots = 5, torch.tensor([3, 0, 7, 2, 5])
    together = torch.randn(1, tokens, (heads + 2 * kv_heads) * dim, generator=generator) * 4
    angles = torch.rand(1, tokens, dim, generator=generator) * 1000
    cos, signed_sin = _rotation(angles.cos(), angles.sin())
    rotated = heads + kv_heads
    qk = _rotate(together[..., : rotated * dim].view(1, tokens, rotated, dim).transpose(1, 2), (cos, signed_sin))
    k_cache, v_cache = torch.zeros(kv_heads, 8, dim), torch.zeros(kv_heads, 8, dim)
    try:
        q = fast_attention.rope_cache_write(together[0], cos[0, 0], signed_sin[0, 0], heads, slots, k_cache, v_cache)
    except fast_attention.KernelUnavailableError:
        return False
    v = together[0, :, rotated * dim :].view(tokens, kv_heads, dim).transpose(0, 1)
    return (
        torch.equal(q, qk[0, :heads].transpose(0, 1))
        and torch.equal(k_cache[:, slots], qk[0, heads:])
        and torch.equal(v_cache[:, slots], v)
    )


def _rms_norm(norm: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """LlamaRMSNorm.forward's arithmetic, op for op, on float32 input: without its casts to and
    from float32 (no-ops there) and the module call, about 6 of its 17 us a call here."""
    variance = x.pow(2).mean(-1, keepdim=True)
    return norm._parameters["weight"] * (x * torch.rsqrt(variance + norm.variance_epsilon))


def _module_call(norm: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return norm(x)


def _norms_agree(model: torch.nn.Module, dtype: torch.dtype) -> bool:
    """Every RMSNorm of the decoder gives _rms_norm's bits (float32 models; a family whose norm
    computes otherwise, e.g. with 1 + weight, fails the probe and keeps its own module)."""
    inner = model.model
    norms = [inner.norm] + [
        n for layer in inner.layers for n in (layer.input_layernorm, layer.post_attention_layernorm)
    ]
    if dtype != torch.float32 or not all(hasattr(n, "variance_epsilon") for n in norms):
        return False
    probe = torch.randn(3, inner.norm.weight.shape[0], generator=torch.Generator().manual_seed(5))
    with torch.inference_mode():
        return all(torch.equal(norm(probe), _rms_norm(norm, probe)) for norm in norms)


def _concatenated_projections(model: torch.nn.Module, dtype: torch.dtype) -> tuple[list | None, list | None]:
    """Per layer, q/k/v and gate/up as one call each (concatenated_linear.py), where the
    layers are oneDNN's and the start-up check finds the stacked call exact; else (None, None)."""
    layers = model.model.layers
    qkv = [[layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj] for layer in layers]
    gate_up = [[layer.mlp.gate_proj, layer.mlp.up_proj] for layer in layers]
    if not all(can_concatenate(group, dtype) for group in qkv + gate_up):
        return None, None
    groups = tuple(sorted({(g[0].in_features, tuple(layer.out_features for layer in g)) for g in qkv + gate_up}))
    if not columns_agree(groups, dtype):
        return None, None
    return [ConcatenatedLinear(g) for g in qkv], [ConcatenatedLinear(g) for g in gate_up]


def _shared_prefix(tables: list[list[int]], block_size: int) -> int:
    """Positions at the start of every sequence that lie in the same physical blocks (the
    prefix cache shares a prompt's full blocks): their keys and values are the same."""
    common = 0
    for blocks in zip(*tables):
        if any(block != blocks[0] for block in blocks):
            break
        common += 1
    return common * block_size


class _AttentionPlan:
    """Index tensors for one step's attention, built once and reused by every layer."""

    def __init__(self, chunks: list[ScheduledChunk], block_size: int, padded: bool) -> None:
        decode, self.prefills = [], []
        row = 0
        for chunk in chunks:
            seq, start, n = chunk.seq, chunk.seq.num_computed_tokens, chunk.num_tokens
            context = start + n
            if n == 1 or chunk.num_draft:  # decoding: one token, or one and a draft to verify
                decode.append((row, seq.block_table[: (context + block_size - 1) // block_size], context, seq, n))
            else:
                self.prefills.append(self._prefill(row, seq, start, n, block_size))
            row += n
        self.padded = padded  # padding rows attend to nothing: their output stays zero
        self.fused_rope = False  # set by place_tokens
        self.sliding_window: int | None = None  # set on the copies window() makes
        self._decode = decode
        self.cache_rows = self.decode_rows = None
        self._windowed: dict[int, _AttentionPlan] = {}
        self._cache_excluded = self._decode_excluded = None  # every layer's, made by the first

    def cache_excluded(self, kv: int, group: int) -> torch.Tensor:
        """The DecodeCache attention's excluded keys, [batch * kv, group * n (padded), width]."""
        if self._cache_excluded is None:
            batch, n, width = len(self.cache_rows), self.cache_queries, self.cache_width
            mask = self.cache_mask.view(batch, 1, 1, n, width).expand(batch, kv, group, n, width)
            self._cache_excluded = excluded_keys(mask.reshape(batch * kv, group * n, width))
        return self._cache_excluded

    def decode_excluded(self, kv: int, group: int) -> torch.Tensor:
        """The gathered-blocks attention's excluded keys, [kv * batch, group (padded), context]."""
        if self._decode_excluded is None:
            batch = self.decode_mask.shape[0]
            mask = self.decode_mask.view(1, batch, 1, -1).expand(kv, batch, group, -1)
            self._decode_excluded = excluded_keys(mask.reshape(kv * batch, group, -1))
        return self._decode_excluded

    def window(self, window: int | None) -> _AttentionPlan:
        """This plan with the keys outside a sliding window masked (a query at position p sees
        keys p - window < k <= p); the plan itself for full attention. Made once a step per window."""
        if window is None:
            return self
        if window not in self._windowed:
            plan = copy.copy(self)
            plan.sliding_window = window
            plan._cache_excluded = plan._decode_excluded = None  # its own masks
            if self.cache_rows is not None:
                keys = torch.arange(self.cache_width)[None, None, :]
                plan.cache_mask = self.cache_mask & (keys > self.cache_limit[:, :, None] - window)
            if self.decode_rows is not None:
                keys = torch.arange(self.decode_mask.shape[1])[None, :]
                plan.decode_mask = self.decode_mask & (keys > self.decode_lengths[:, None] - 1 - window)
            plan.prefills = []
            for rows, slots, mask in self.prefills:
                n, context = mask.shape
                queries = context - n + torch.arange(n)
                plan.prefills.append((rows, slots, mask & (torch.arange(context)[None, :] > queries[:, None] - window)))
            self._windowed[window] = plan
        return self._windowed[window]

    @staticmethod
    def _prefill(row: int, seq, start: int, n: int, block_size: int) -> tuple:
        """Query rows, key slots and causal mask of n tokens computed from position `start`."""
        context = start + n
        positions = torch.arange(context)
        table = torch.tensor(seq.block_table)
        slots = table[positions // block_size] * block_size + positions % block_size
        # query j sits at position start + j and sees keys 0 .. start + j
        mask = torch.arange(context)[None, :] <= (start + torch.arange(n))[:, None]
        return torch.arange(row, row + n), slots, mask

    def _plan_gather(self, block_size: int) -> None:
        """Gather the decoding sequences' blocks from the paged cache (when the DecodeCache
        declines); sequences verifying a draft take the prefill path instead."""
        for row, _, context, seq, n in [d for d in self._decode if d[4] > 1]:
            self.prefills.append(self._prefill(row, seq, context - n, n, block_size))
        decode = [d for d in self._decode if d[4] == 1]
        if not decode:
            return
        self.decode_rows = torch.tensor([r for r, _, _, _, _ in decode], dtype=torch.long)
        width = max(len(table) for _, table, _, _, _ in decode)
        # padding points at block 0: its keys are read but masked out
        self.decode_tables = torch.tensor([table + [0] * (width - len(table)) for _, table, _, _, _ in decode])
        self.decode_lengths = torch.tensor([context for _, _, context, _, _ in decode])
        self.decode_mask = torch.arange(width * block_size)[None, :] < self.decode_lengths[:, None]  # [batch, context]

    def place_tokens(self, total: int) -> None:
        """Plan the fused rotation and cache write (fast_attention.rope_cache_write) for this
        step: each of its `total` token rows' DecodeCache row (-1: none) and position."""
        self.fused_rope = True
        self.mark_destinations(total)

    def mark_destinations(self, total: int) -> None:
        """Each of the step's `total` token rows' DecodeCache row (-1: none) and position."""
        if self.cache_rows is None:
            return
        self.cache_destination_rows = torch.full((total,), -1, dtype=torch.long)
        self.cache_destination_positions = torch.zeros(total, dtype=torch.long)
        self.cache_destination_rows[self.cache_token_rows] = self.cache_row_ids
        self.cache_destination_positions[self.cache_token_rows] = self.cache_positions

    def use_decode_cache(
        self,
        cache: DecodeCache,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        shared_min_tail: int | None = None,
        scales: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> None:
        """Place this step's decoding sequences in the DecodeCache; the decode attention then
        reads their rows in place. Plans the gather from the paged cache when they do not fit.
        `shared_min_tail`: read a prompt prefix common to the whole batch once (SharedPrefix),
        leaving at least this many keys after it to each row (row_invariance.prefix_sharing_min_tail);
        None: never. `scales`: the int8 paged cache's key and value scales."""
        decode = self._decode
        self.cache_shared = self.cache_common = 0
        if not decode:
            cache.clear()
            return
        placed = cache.prepare(
            [
                (seq.seq_id, table, context, seq.num_prompt_tokens + seq.params.max_tokens)
                for _, table, context, seq, _ in decode
            ],
            k_cache,
            v_cache,
            [n for _, _, _, _, n in decode],
            scales,
        )
        if placed is None:
            self._plan_gather(cache.block_size)
            return
        self.cache_k_t, self.cache_v = cache.k_t.unbind(0), cache.v.unbind(0)  # per layer, made once a step
        if cache.quantized:
            self.cache_k_scale, self.cache_v_scale = cache.k_scale.unbind(0), cache.v_scale.unbind(0)
        by_row = sorted(range(len(decode)), key=placed.__getitem__)  # cache row r holds decode[by_row[r]]
        n_max = max(decode[i][4] for i in by_row)
        token_rows, row_ids, positions, query_index, valid = [], [], [], [], []
        for r, i in enumerate(by_row):
            first, _, context, _, n = decode[i]
            for t in range(n_max):
                if t < n:
                    token_rows.append(first + t)
                    row_ids.append(r)
                    positions.append(context - n + t)  # where this token's key and value go
                    valid.append(r * n_max + t)
                query_index.append(first + min(t, n - 1))  # padding repeats a real query; dropped after
        contexts = torch.tensor([decode[i][2] for i in by_row])
        starts = contexts - torch.tensor([decode[i][4] for i in by_row])
        self.cache_rows = torch.tensor([decode[i][0] for i in by_row], dtype=torch.long)  # first query rows
        self.cache_queries = n_max
        # each row's real queries, where drafts of different lengths pad the batch to the longest
        self.cache_counts = torch.tensor([decode[i][4] for i in by_row]) if n_max > 1 else None
        self.cache_token_rows = torch.tensor(token_rows, dtype=torch.long)
        self.cache_row_ids = torch.tensor(row_ids)
        self.cache_positions = torch.tensor(positions)
        self.cache_query_index = torch.tensor(query_index, dtype=torch.long)
        self.cache_valid = torch.tensor(valid, dtype=torch.long)
        self.cache_width = int(contexts.max())
        # query t of row b sees keys 0 .. starts[b] + t: [batch, n_max, width]
        self.cache_limit = starts[:, None] + torch.arange(n_max)[None, :]
        self.cache_mask = torch.arange(self.cache_width)[None, None, :] <= self.cache_limit[:, :, None]
        if len(decode) > 1:
            # positions every row already held before this step: the same keys in every row
            self.cache_common = min(
                _shared_prefix([table for _, table, _, _, _ in decode], cache.block_size), int(starts.min())
            )
            # and enough keys after them for the rows' own score GEMM to sum as a whole-width one
            if shared_min_tail is not None:
                shared = min(self.cache_common, self.cache_width - shared_min_tail)
                if shared >= MIN_SHARED_PREFIX:
                    self.cache_shared = shared
