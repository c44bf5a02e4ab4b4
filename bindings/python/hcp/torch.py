"""hcp.torch: hcp's CP attention inside PyTorch training, over the torch.distributed groups the job already has.

    attn = hcp.torch.CpAttention(cp_group, comm="a2a+p2p", hcp_sizes=[2, 4])   # once, on every rank together
    out = attn(q, k, v)          # this rank's part (bshd, sbhd, or thd with cu_seqlens); autograd gives dq, dk, dv

The exchanges go through torch.distributed on the caller's group (gloo for CPU tensors, NCCL for CUDA tensors) via
hcp's callback communicator, so hcp uses the same ranks as the rest of the job. Imports torch when used; the rest of
the package needs only the standard library. CPU tensors (fp32, bf16, fp16) run on hcp's CPU kernels; CUDA tensors
(bf16, fp16; head dims multiples of 8 up to 256) on its CUDA kernels, on a stream of the CpAttention's own ordered
after torch's current stream. The CUDA path has not run on a GPU yet."""

import contextlib
import ctypes

from .attention import CpContext
from .callback_comm import CallbackComm, Collectives


def _torch():
    import torch  # noqa: PLC0415 - lazily: `import hcp` must not need torch
    import torch.distributed as dist  # noqa: PLC0415
    return torch, dist


class _DeviceBytes:
    """`nbytes` of device memory at `address`, as torch.as_tensor reads it (the CUDA array interface). No stream is
    named: hcp orders its work on the stream the collectives run on."""

    def __init__(self, address, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (address, False),
                                         "version": 2}


class TorchCollectives(Collectives):
    """hcp.Collectives over a torch.distributed process group (None: the default group). Splitting it (which hcp
    does when it builds the CP and hierarchical groups) is collective over the whole job: every process must be
    creating its CpAttention at the same time, as every rank builds its model (torch.distributed.new_group needs
    every process). `order`: the group's global ranks in this communicator's rank order (default: the group's).
    `stream` (a torch.cuda.Stream): hcp's buffers are device memory given as (address, nbytes), and every
    collective is issued on that stream - torch.distributed orders NCCL's work after the stream's and the stream's
    later work after NCCL's, which is the order hcp's callback communicator promises."""

    def __init__(self, group=None, order=None, stream=None):
        torch, dist = _torch()
        self._torch, self._dist = torch, dist
        self.group = group
        self.stream = stream
        self.device = torch.device("cpu") if stream is None else stream.device
        self.torch_order = (list(range(dist.get_world_size())) if group is None
                            else list(dist.get_process_group_ranks(group)))
        self.order = list(order) if order is not None else list(self.torch_order)
        self.me = dist.get_rank()
        self.rank, self.size = self.order.index(self.me), len(self.order)
        # This communicator's rank of each of the group's members in torch's order (None: the same order).
        self.logical = None if self.order == self.torch_order else [self.order.index(g) for g in self.torch_order]
        self.aborted = None

    def _live(self):
        if self.aborted is not None:
            raise RuntimeError(f"this communicator was aborted: {self.aborted}")
        return contextlib.nullcontext() if self.stream is None else self._torch.cuda.stream(self.stream)

    def _bytes(self, buffer):
        """A uint8 tensor over hcp's buffer: a memoryview of host memory, or (address, nbytes) of device memory
        (host memory too when this communicator has no stream: the tests drive the pointer path on the CPU)."""
        torch = self._torch
        if isinstance(buffer, tuple):
            address, nbytes = buffer
            if nbytes == 0:
                return torch.empty(0, dtype=torch.uint8, device=self.device)
            if self.stream is not None:
                return torch.as_tensor(_DeviceBytes(address, nbytes), device=self.device)
            buffer = (ctypes.c_char * nbytes).from_address(address)
        view = memoryview(buffer).cast("B")
        return torch.frombuffer(view, dtype=torch.uint8) if len(view) else torch.empty(0, dtype=torch.uint8)

    def send_recv(self, send, dst, recv, src):
        with self._live():
            dist = self._dist
            s, r = self._bytes(send), self._bytes(recv)
            ops = []
            if s.numel():
                ops.append(dist.P2POp(dist.isend, s, self.order[dst], group=self.group))
            if r.numel():
                ops.append(dist.P2POp(dist.irecv, r, self.order[src], group=self.group))
            # One batch: NCCL then posts both sides together (a ring of separate sends could wait on itself).
            for request in dist.batch_isend_irecv(ops) if ops else []:
                request.wait()

    def all_to_all(self, send, recv):
        with self._live():
            self._all_to_all(self._bytes(send), self._bytes(recv))

    def _all_to_all(self, s, r):
        torch, dist = self._torch, self._dist
        if self.logical is None:
            dist.all_to_all_single(r, s, group=self.group)
            return
        chunk = s.numel() // self.size
        s = s.view(self.size, chunk)[self.logical].contiguous().view(-1)
        out = torch.empty_like(r).view(self.size, chunk)
        dist.all_to_all_single(out.view(-1), s, group=self.group)
        r.view(self.size, chunk)[self.logical] = out

    def all_gather(self, send, recv):
        with self._live():
            s = self._bytes(send)
            r = self._bytes(recv).view(self.size, s.numel())
            where = self.logical or list(range(self.size))
            self._dist.all_gather([r[where[j]] for j in range(self.size)], s, group=self.group)

    def reduce_scatter_sum_f32(self, send, recv):
        # gloo has no reduce_scatter: the blocks travel by all-to-all and are added here in rank order - the same
        # bits on every run and every backend.
        with self._live():
            torch = self._torch
            r = self._bytes(recv).view(torch.float32)
            count = r.numel()
            blocks = torch.empty(self.size * count, dtype=torch.float32, device=self.device)
            self._all_to_all(self._bytes(send), blocks.view(torch.uint8))
            total = blocks.view(self.size, count)
            acc = total[0].clone()
            for j in range(1, self.size):
                acc += total[j]
            r.copy_(acc)

    def barrier(self):
        with self._live():
            self._dist.barrier(group=self.group)

    def split(self, color, key):
        with self._live():
            return self._split(color, key)

    def _split(self, color, key):
        dist = self._dist
        everyone = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, (tuple(self.torch_order), int(color), int(key), self.me))
        groups = {}
        for parent, c, k, rank in everyone:
            if c >= 0:
                groups.setdefault((parent, c), []).append((k, rank))
        mine = None
        for (parent, c), members in sorted(groups.items()):  # the same order on every process
            members.sort()
            group = dist.new_group(ranks=sorted(rank for _, rank in members))
            if parent == tuple(self.torch_order) and c == color and any(rank == self.me for _, rank in members):
                mine = TorchCollectives(group, order=[rank for _, rank in members], stream=self.stream)
        return mine

    def abort(self, reason):
        # torch.distributed cannot abort a gloo group: the others fail when this process exits (its sockets close)
        # or at the group's timeout. This communicator fails every later call.
        self.aborted = reason or "aborted"


def _dtype_name(torch, dtype):
    names = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
    if dtype not in names:
        raise TypeError(f"hcp.torch takes float32, bfloat16 or float16 tensors, got {dtype}")
    return names[dtype]


def _buffer(torch, t):
    """The bytes of a contiguous CPU tensor as a writable buffer, shared with the tensor (numpy has no bf16); a CUDA
    tensor as its device pointer."""
    if t.is_cuda:
        return t.data_ptr()
    return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()


def _function():
    """The torch.autograd.Function, made on first use (torch is imported then)."""
    torch, _ = _torch()

    class CpAttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, offset, bias, attn, mask):
            b, s, h, d = q.shape
            dv = v.shape[3]  # MLA: v's head dim may differ from q's and k's; out has it
            out = q.new_empty(b, s, h, dv)
            lse = torch.empty(b, h, s, dtype=torch.float32, device=q.device)
            sinks = attn._sinks(offset, h)
            max_logit = torch.empty(h, dtype=torch.float32) if attn.return_max_logit else None  # host memory
            biases = {} if bias is None else {"bias": _buffer(torch, bias), "bias_shape": tuple(bias.shape)}
            with attn._ordered(q, k, v, out, lse, *([] if bias is None else [bias])):
                attn.context.forward(_buffer(torch, q), _buffer(torch, k), _buffer(torch, v), (b, s, h, d),
                                     kv_heads=k.shape[2], causal=attn.causal, dtype=_dtype_name(torch, q.dtype),
                                     out=_buffer(torch, out), lse=_buffer(torch, lse), **mask, **sinks,
                                     max_logit=None if max_logit is None else max_logit.numpy(), head_dim_v=dv,
                                     **biases)
            attn.max_logit = None if max_logit is None else max_logit.to(q.device)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.attn, ctx.mask, ctx.sinks, ctx.offset, ctx.bias, ctx.biases = attn, mask, sinks, offset, bias, biases
            return out

        @staticmethod
        def backward(ctx, dout):
            q, k, v, out, lse = ctx.saved_tensors
            attn = ctx.attn
            dout = dout.contiguous()
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            learnable = ctx.sinks.get("softmax") == "learnable"
            d_sink = torch.zeros(q.shape[2], dtype=torch.float32) if learnable else None  # host memory: hcp's form
            d_bias = None
            if ctx.bias is not None and ctx.needs_input_grad[4]:
                d_bias = torch.zeros_like(ctx.bias)
            extra = [t for t in (ctx.bias, d_bias) if t is not None]
            with attn._ordered(q, k, v, out, lse, dout, dq, dk, dv, *extra):
                attn.context.backward(_buffer(torch, q), _buffer(torch, k), _buffer(torch, v), _buffer(torch, out),
                                      _buffer(torch, lse), _buffer(torch, dout), tuple(q.shape), kv_heads=k.shape[2],
                                      causal=attn.causal, dtype=_dtype_name(torch, q.dtype), dq=_buffer(torch, dq),
                                      dk=_buffer(torch, dk), dv=_buffer(torch, dv), **ctx.mask, **ctx.sinks,
                                      d_sink=None if d_sink is None else d_sink.numpy(), head_dim_v=v.shape[3],
                                      d_bias=None if d_bias is None else _buffer(torch, d_bias), **ctx.biases)
            d_offset = None if d_sink is None else d_sink.view(ctx.offset.shape).to(ctx.offset)
            return dq, dk, dv, d_offset, d_bias, None, None

    return CpAttentionFunction


class CpAttention:
    """CP attention on this rank's part of the sequence; backward gives dq, dk, dv. Tensors of one dtype, in one
    of Transformer Engine's layouts (`qkv_format`):
    - "bshd" (default): q [B, S/cp, H, D], k and v [B, S/cp, Hkv, D] - this rank's dual chunks (chunks r and
      2cp-1-r of 2cp, as Megatron's get_batch_on_this_cp_rank and shard_for_cp_rank give them);
    - "sbhd": the same with the sequence first, [S/cp, B, H, D];
    - "thd": packed documents, q [T/cp, H, D], k and v [T/cp, Hkv, D]: this rank's rows of the padded packed batch
      (packed_rank_indices), with the call's cu_seqlens (offsets of the real lengths) and cu_seqlens_padded (where
      each document starts; every padded length divisible by 2 cp; None: cu_seqlens).
    out has q's shape (with v's head dim, which may differ: MLA). `cp_group`: the torch.distributed group of the CP
    ranks (None: every process); `comm`:
    "p2p", "a2a", "a2a+p2p" (with hcp_sizes=[a2a, p2p], or your level groups hcp_groups=[a2a_group, p2p_group] in
    Megatron's layout, e.g. from new_cp_groups) or "all_gather"; `window`: (left, right) sliding window, -1 for an
    unbounded side. Collective: with hcp_sizes every process of the job creates its CpAttention at the same time
    (hcp makes the level groups with new_group); with hcp_groups, or without levels, the CP group's ranks.
    `softmax_type`: attention sinks as Transformer Engine's - "vanilla" (none), "off-by-one" (a logit 0 in every
    softmax) or "learnable", whose logits, one per head, each call takes as `softmax_offset` (a float tensor of H
    values, e.g. TE's [1, H, 1, 1] parameter) and whose gradient autograd gets (summed over the CP group: every
    rank gets the whole batch's).
    `core_attention_bias` (a call's argument): an attention bias as Transformer Engine's post_scale_bias under CP -
    this rank's query rows of it against every key, a float32 CPU tensor [Bb, Hb, S/cp, S] (Bb 1 or B, Hb 1 or H) or
    [1, 1, 1, S] on the CpAttention's device - added to the scaled scores; autograd gets its gradient. bshd and
    sbhd.
    `return_max_logit`: each call returns (out, max_logit), max_logit a float32 tensor of H values on q's device:
    each head's largest logit over the CP group's whole batch, as Transformer Engine's return_max_logit (QK-clip).
    `device`: "cpu" (float32, bfloat16, float16 on hcp's CPU kernels) or "cuda" (bfloat16, float16, head dims
    multiples of 8 up to 256 on the current CUDA device - torch.cuda.set_device first); None: "cuda" when the CP group's backend
    is NCCL, else "cpu". On CUDA hcp works on a stream of its own that waits for torch's current stream, and the
    current stream waits for it before the results are used; the tensors are recorded on it for the allocator."""

    _fn = None

    def __init__(self, cp_group=None, comm="p2p", hcp_sizes=None, causal=True, qkv_format="bshd", window=None,
                 hcp_groups=None, device=None, softmax_type="vanilla", return_max_logit=False):
        if qkv_format not in ("bshd", "sbhd", "thd"):
            raise ValueError(f"qkv_format must be bshd, sbhd or thd, got {qkv_format!r}")
        if hcp_groups is not None and hcp_sizes is not None:
            raise ValueError("give hcp_sizes (hcp builds the level groups) or hcp_groups (yours), not both")
        self.qkv_format = qkv_format
        self.window = None if window is None else (int(window[0]), int(window[1]))
        self.causal = bool(causal)
        if softmax_type not in ("vanilla", "off-by-one", "learnable"):
            raise ValueError(f"softmax_type must be vanilla, off-by-one or learnable, got {softmax_type!r}")
        self.softmax_type = softmax_type
        self.return_max_logit = bool(return_max_logit)
        self.max_logit = None  # the last call's, with return_max_logit
        self.device, self.stream = self._device_of(cp_group, device)
        on = {} if self.stream is None else {"device": "cuda", "cuda_stream": self.stream.cuda_stream}
        with self._on_device():
            self.collectives = TorchCollectives(cp_group, stream=self.stream)
            self.comm = CallbackComm(self.collectives, **on)
            self.level_comms = [CallbackComm(TorchCollectives(g, stream=self.stream), **on) for g in (hcp_groups or [])]
            if hcp_groups is not None:  # the caller's level groups: nothing to split, nothing collective over the job
                self.context = CpContext.on_groups(self.comm, self.level_comms, comm=comm, **on)
            else:
                n = self.collectives.size
                self.context = CpContext(self.comm, world_size=n, cp=n, comm=comm, hcp_sizes=hcp_sizes, **on)

    @staticmethod
    def _device_of(cp_group, device):
        """(torch.device, the CUDA stream hcp works on or None) for `device`, the backend deciding when None."""
        torch, dist = _torch()
        if device is None:
            device = "cuda" if str(dist.get_backend(cp_group)).lower() == "nccl" else "cpu"
        if device == "cpu":
            return torch.device("cpu"), None
        if device != "cuda":
            raise ValueError(f"hcp.torch: device must be 'cpu' or 'cuda', got {device!r}")
        if not torch.cuda.is_available():
            raise RuntimeError("hcp.torch: device='cuda' needs a torch built with CUDA and a visible GPU "
                               f"(torch {torch.__version__}: torch.cuda.is_available() is False)")
        index = torch.cuda.current_device()
        return torch.device("cuda", index), torch.cuda.Stream(device=index)

    def _on_device(self):
        return contextlib.nullcontext() if self.stream is None else _torch()[0].cuda.device(self.device)

    @contextlib.contextmanager
    def _ordered(self, *tensors):
        """On CUDA: hcp's stream starts after the work torch's current stream has queued (the inputs), and the
        current stream continues after hcp's (the outputs); the tensors are kept from reuse until hcp's stream is
        done with them. On the CPU hcp's calls return when done."""
        if self.stream is None:
            yield
            return
        torch, _ = _torch()
        with torch.cuda.device(self.device):
            current = torch.cuda.current_stream()
            self.stream.wait_stream(current)
            try:
                yield
            finally:
                current.wait_stream(self.stream)
                for t in tensors:
                    t.record_stream(self.stream)

    def _sinks(self, offset, heads):
        """The attention-sink arguments of a call: the softmax type and, learnable, the logits as host floats."""
        if self.softmax_type != "learnable":
            return {"softmax": self.softmax_type} if self.softmax_type != "vanilla" else {}
        values = offset.detach().reshape(-1).float().cpu().tolist()
        if len(values) != heads:
            raise ValueError(f"hcp.torch: softmax_offset must hold one value per head ({heads}), got {len(values)}")
        return {"softmax": "learnable", "sink": values}

    def _check(self, q, k, v):
        dims = 3 if self.qkv_format == "thd" else 4
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.device != self.device:
                raise ValueError(f"hcp.torch: {name} is on {t.device}; this CpAttention computes on {self.device} "
                                 "(CpAttention(device=...), or the CP group's backend: NCCL for CUDA)")
            if t.dim() != dims:
                raise ValueError(f"hcp.torch: {name} must have {dims} dimensions ({self.qkv_format}), got shape "
                                 f"{tuple(t.shape)}")
        if k.shape[:-1] != v.shape[:-1] or q.dtype != k.dtype or q.dtype != v.dtype:
            raise ValueError("hcp.torch: k and v must have one shape but for the head dim (MLA), and q, k, v one "
                             "dtype")

    def __call__(self, q, k, v, cu_seqlens=None, cu_seqlens_padded=None, softmax_offset=None,
                 core_attention_bias=None):
        if CpAttention._fn is None:
            CpAttention._fn = _function()
        self._check(q, k, v)
        if (softmax_offset is not None) != (self.softmax_type == "learnable"):
            raise ValueError("hcp.torch: softmax_offset goes with softmax_type='learnable', and learnable needs it")
        if (cu_seqlens is not None) != (self.qkv_format == "thd"):
            raise ValueError("hcp.torch: cu_seqlens goes with qkv_format='thd', and thd needs it")
        bias = core_attention_bias
        if bias is not None:
            torch, _ = _torch()
            if bias.dim() != 4 or bias.dtype != torch.float32 or bias.device != self.device:
                raise ValueError("hcp.torch: core_attention_bias must be a float32 tensor [Bb, Hb, S/cp, S] or "
                                 f"[1, 1, 1, S] on {self.device}, got {tuple(bias.shape)} {bias.dtype} on "
                                 f"{bias.device}")
            bias = bias.contiguous()
        mask = {"window": self.window}
        if cu_seqlens is not None:
            mask["cu_seqlens"] = [int(x) for x in cu_seqlens]
            if cu_seqlens_padded is not None:
                mask["cu_seqlens_padded"] = [int(x) for x in cu_seqlens_padded]
        # To hcp's [B, S, H, D]: thd is one batch row; sbhd is transposed (a copy each way - hcp's kernels read bshd).
        if self.qkv_format == "thd":
            q, k, v = (t.contiguous().unsqueeze(0) for t in (q, k, v))
            out = CpAttention._fn.apply(q, k, v, softmax_offset, bias, self, mask).squeeze(0)
        elif self.qkv_format == "sbhd":
            q, k, v = (t.transpose(0, 1).contiguous() for t in (q, k, v))
            out = CpAttention._fn.apply(q, k, v, softmax_offset, bias, self, mask).transpose(0, 1)
        else:
            out = CpAttention._fn.apply(q.contiguous(), k.contiguous(), v.contiguous(), softmax_offset, bias, self,
                                        mask)
        return (out, self.max_logit) if self.return_max_logit else out

    def close(self):
        self.context.close()
        for c in self.level_comms:
            c.close()
        self.comm.close()


def shard_for_cp_rank(t, cp_rank, cp_size, seq_dim=1):
    """This CP rank's dual chunks of a full-sequence tensor along seq_dim (chunks r and 2cp-1-r of 2cp), as
    Megatron's get_batch_on_this_cp_rank cuts tokens, labels, q, k and v."""
    n = t.shape[seq_dim]
    if n % (2 * cp_size):
        raise ValueError(f"the sequence ({n}) must be divisible by 2 x cp ({2 * cp_size})")
    chunks = t.chunk(2 * cp_size, dim=seq_dim)
    torch, _ = _torch()
    return torch.cat([chunks[cp_rank], chunks[2 * cp_size - 1 - cp_rank]], dim=seq_dim)


def packed_rank_indices(cu_seqlens, cp_size, cp_rank, cu_seqlens_padded=None):
    """The rows of a padded packed (thd) batch this CP rank holds, as a LongTensor (Transformer Engine's
    thd_get_partitioned_indices): t.index_select(0, indices) shards tokens, labels, q, k and v."""
    from .attention import packed_rank_indices as rows  # noqa: PLC0415
    torch, _ = _torch()
    return torch.tensor(rows([int(x) for x in cu_seqlens], cp_size, cp_rank,
                             None if cu_seqlens_padded is None else [int(x) for x in cu_seqlens_padded]),
                        dtype=torch.long)


def new_cp_groups(topology):
    """This process's CP group and hierarchical level groups, made with torch.distributed.new_group in Megatron's
    layout from an hcp.Topology of the job (every process calls it, as Megatron's initialize_model_parallel):
    (cp_group, [level groups]) - the levels empty without hcp_sizes. Pass them as CpAttention(cp_group, comm=...,
    hcp_groups=levels)."""
    _, dist = _torch()
    me = dist.get_rank()
    mine = None
    levels = []
    for kind, level in [("cp", 0)] + [("hcp", lv) for lv in range(topology.num_levels)]:
        for ranks in topology.groups(kind, level):  # every group, in the same order on every process
            group = dist.new_group(ranks=sorted(ranks))
            if me in ranks:
                if kind == "cp":
                    mine = group
                else:
                    levels.append(group)
    return mine, levels
