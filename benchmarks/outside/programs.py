"""Small dynamic programs in the styles research code is written in (issue 33: "we will measure
on dynamic networks you have not seen"). Written apart from dync's tests and suite, each as its
authors would, without regard to what dync supports; `benchmarks.outside` compiles and times
them. Models only: no weights are trained, and none is loaded."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class PackedLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16, padding_idx=0)
        self.lstm = nn.LSTM(16, 32, batch_first=True, bidirectional=True)
        self.out = nn.Linear(64, 3)

    def forward(self, tokens):
        lengths = (tokens != 0).sum(1)
        packed = pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return self.out(torch.cat([h[0], h[1]], dim=-1))


class EncoderWithPadMask(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        mask = x.abs().sum(-1) < 0.5
        return self.enc(x, src_key_padding_mask=mask)


class MHAWithMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        n = x.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        out, w = self.mha(x, x, x, attn_mask=causal)
        return out, w


class TopKRouting(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(16, 4)
        self.experts = nn.ModuleList(nn.Linear(16, 16) for _ in range(4))

    def forward(self, x):
        scores = self.gate(x).softmax(-1)
        top, idx = scores.topk(2, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = (idx == e).any(-1)
            if sel.any():
                w = (top * (idx == e)).sum(-1, keepdim=True)[sel]
                out[sel] += w * expert(x[sel])
        return out


class ArgmaxItemLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 8)
        outs = []
        for _ in range(20):
            h = self.cell(x, h)
            logits = self.head(h)
            outs.append(logits)
            if logits.argmax(-1)[0].item() == 4:
                break
        return torch.stack(outs, 1)


class AdaptivePool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = F.adaptive_avg_pool2d(F.relu(self.conv(x)), (3, 3))
        z = F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=False)
        return y.flatten(1), z.mean((2, 3))


class CumsumGather(nn.Module):
    def forward(self, x):
        order = x.argsort(dim=-1, descending=True)
        probs = x.softmax(-1).gather(-1, order)
        keep = probs.cumsum(-1) < 0.9
        keep[..., 0] = True
        return torch.where(keep, probs, torch.zeros_like(probs)), keep.sum(-1)


class ListOfSizesTolist(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        splits = [n // 2, n - n // 2]
        a, b = torch.split(x, splits)
        return a.sum(0) - b.sum(0), torch.chunk(x, 2, dim=1)[1].mean()


class PosEncodingArange(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        n = x.size(1)
        pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, 16, 2).float() * (-math.log(10000.0) / 16))
        pe = torch.zeros(n, 16)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        return self.proj(x + pe)


class NormsAndActs(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(4, 16)
        self.conv = nn.Conv1d(16, 16, 5, padding=2, groups=4)

    def forward(self, x):
        y = F.silu(self.gn(self.conv(x)))
        return F.glu(torch.cat([y, F.mish(y)], 1), dim=1) + F.hardswish(x), F.normalize(y, dim=1)


class SeqMaskGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 16, num_layers=2, batch_first=True)
        self.att = nn.Linear(16, 1)

    def forward(self, x):
        lengths = (x.abs().sum(-1) > 0).sum(1)
        h0 = torch.zeros(2, x.shape[0], 16)
        out, h = self.gru(x, h0)
        mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
        scores = self.att(out).squeeze(-1).masked_fill(~mask, float("-inf"))
        w = scores.softmax(-1)
        return (w.unsqueeze(-1) * out).sum(1), h[-1]


class EinsumAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(32, 96)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, 4, 8).permute(2, 0, 3, 1, 4)
        a = torch.einsum("bhqd,bhkd->bhqk", q, k) * 8 ** -0.5
        return torch.einsum("bhqk,bhkd->bqhd", a.softmax(-1), v).reshape(b, n, 32)


class UnetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
        self.out = nn.Conv2d(11, 2, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        ph, pw = (-h) % 2, (-w) % 2
        xp = F.pad(x, (0, pw, 0, ph), mode="reflect")
        y = self.up(F.relu(self.down(xp)))[..., :h, :w]
        up2 = F.interpolate(y, scale_factor=2, mode="nearest")[..., ::2, ::2]
        return self.out(torch.cat([x, up2], 1))


class SortSearch(nn.Module):
    def forward(self, x):
        s, idx = x.sort(-1)
        q = torch.linspace(-1, 1, 5).expand(x.shape[0], 5).contiguous()
        pos = torch.searchsorted(s, q)
        return pos, idx.flip(-1)[:, :2], torch.roll(x, 1, -1).cumprod(-1)


class StatsUnfold(nn.Module):
    def forward(self, x):
        windows = x.unfold(1, 4, 2)
        return windows.std(-1), x.var(1, keepdim=True), F.layer_norm(x, x.shape[-1:])


class ScatterGather(nn.Module):
    def forward(self, x):
        idx = x.argmax(-1, keepdim=True)
        onehot = torch.zeros_like(x).scatter_(-1, idx, 1.0)
        top = x.gather(-1, idx)
        x = x.clone()
        x[x < 0] = 0
        return onehot * top, x.masked_fill(onehot.bool(), -1.0)


class DepthwiseSep(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.bn = nn.BatchNorm2d(16)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(16, 4, 1), nn.ReLU(), nn.Conv2d(4, 16, 1), nn.Sigmoid())

    def forward(self, x):
        y = F.relu6(self.bn(self.pw(self.dw(x))))
        y = y * self.se(y)
        return F.max_pool2d(y, 2, ceil_mode=True)


class ConditionalResolution(nn.Module):
    def __init__(self):
        super().__init__()
        self.small = nn.Conv2d(3, 8, 3, padding=1)
        self.big = nn.Conv2d(3, 8, 5, padding=2)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        if x.shape[-1] > 24:
            x = F.interpolate(x, size=(24, 24), mode="bilinear", align_corners=False)
            f = self.big(x)
        else:
            f = self.small(x)
        logits = self.head(f.mean((2, 3)))
        if logits.softmax(-1).max() > 0.5:
            return logits
        return logits * 2


class EntropyExit(nn.Module):
    """BranchyNet-style: exit when the mean entropy of the first head is low."""
    def __init__(self):
        super().__init__()
        self.b1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.h1 = nn.Linear(128, 10)
        self.b2 = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        f = self.b1(x)
        p = self.h1(f).softmax(-1)
        ent = -(p * p.clamp_min(1e-9).log()).sum(-1)
        if ent.mean() < 2.0:
            return p.log()
        return self.b2(f).log_softmax(-1)


class BlockDropPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()) for _ in range(3))

    def forward(self, x):
        x = self.stem(x)
        mask = torch.sigmoid(self.policy(x)) > 0.5
        for i, block in enumerate(self.blocks):
            m = mask[:, i]
            if m.any():
                x = x + m.float().view(-1, 1, 1, 1) * block(x)
        return x.mean((2, 3))


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(48, 6))
        nn.init.zeros_(self.loc[2].weight)
        with torch.no_grad():
            self.loc[2].bias.copy_(torch.tensor([1.0, 0.1, 0.0, -0.1, 0.9, 0.05]))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


class GreedyLSTMDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.enc = nn.LSTM(16, 32, batch_first=True)
        self.cell = nn.LSTMCell(16, 32)
        self.out = nn.Linear(32, 20)

    def forward(self, src):
        _, (h, c) = self.enc(self.emb(src))
        h, c = h[0], c[0]
        tok = torch.zeros(src.shape[0], dtype=torch.long)
        outs = []
        for _ in range(12):
            h, c = self.cell(self.emb(tok), (h, c))
            tok = self.out(h).argmax(-1)
            outs.append(tok)
            if (tok == 1).all():
                break
        return torch.stack(outs, 1)


class PointerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(2, 32)
        self.q = nn.Linear(32, 32)

    def forward(self, pts):
        e = torch.tanh(self.enc(pts))  # b, n, d
        b, n, _ = e.shape
        mask = torch.zeros(b, n, dtype=torch.bool)
        q = e.mean(1)
        order = []
        for _ in range(n):
            s = torch.einsum("bd,bnd->bn", self.q(q), e).masked_fill(mask, float("-inf"))
            i = s.argmax(-1)
            order.append(i)
            mask = mask.scatter(1, i[:, None], True)
            q = e[torch.arange(b), i]
        return torch.stack(order, 1)


class MaskedSetPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32))
        self.rho = nn.Linear(64, 4)

    def forward(self, x, lengths):
        mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
        h = self.phi(x) * mask[..., None]
        mean = h.sum(1) / lengths[:, None].clamp_min(1)
        mx = h.masked_fill(~mask[..., None], -1e9).amax(1)
        return self.rho(torch.cat([mean, mx], -1))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 16)
        self.l2 = nn.Linear(16, 4)

    def prop(self, h, src, dst):
        n = h.shape[0]
        deg = torch.zeros(n).index_add_(0, dst, torch.ones(dst.shape[0])) + 1
        norm = deg.rsqrt()
        msg = h[src] * (norm[src] * norm[dst])[:, None]
        out = torch.zeros_like(h).index_add_(0, dst, msg)
        return out + h / deg[:, None]

    def forward(self, x, edges):
        src, dst = edges[0], edges[1]
        h = F.relu(self.prop(self.l1(x), src, dst))
        h = self.prop(self.l2(h), src, dst)
        pooled = torch.zeros(1, 4).scatter_reduce(0, torch.zeros_like(h[:, :1]).long().expand(-1, 4), h, "amax", include_self=False)
        return h.log_softmax(-1), pooled


class CapsuleRouting(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.randn(1, 6, 4, 8, 8) * 0.1)

    @staticmethod
    def squash(s):
        n2 = (s * s).sum(-1, keepdim=True)
        return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)

    def forward(self, u):  # b, n_in, 8
        b, n = u.shape[:2]
        u_hat = torch.einsum("bnd,jnde->bjne", u[:, :4].reshape(b, 4, 8), self.W[0, :, :4])
        logits = torch.zeros(b, 6, 4)
        for _ in range(3):
            c = logits.softmax(1)
            v = self.squash((c[..., None] * u_hat).sum(2))
            logits = logits + (u_hat * v[:, :, None]).sum(-1)
        return v.norm(dim=-1)


class PixelShuffleUp(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 12, 3, padding=2, dilation=2)
        self.c2 = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        y = F.pixel_shuffle(self.c1(x), 2)
        patches = F.unfold(x, 2, stride=2)  # b, 12, L
        return self.c2(y), patches.transpose(1, 2).softmax(-1), F.pixel_unshuffle(y, 2).mean(1)


class NumericsMix(nn.Module):
    def forward(self, x):
        y = torch.where(x > 0, x.log1p(), torch.expm1(x))
        z = torch.nan_to_num(x / (x.abs() < 0.5).float(), posinf=3.0, neginf=-3.0)
        d = torch.diff(x, dim=-1)
        return y.logsumexp(-1), z.clamp(-2, 2), d.cumsum(-1), torch.atan2(x, x.flip(-1)), x.sign() * x.abs().pow(0.3)


class ACT(nn.Module):
    """Adaptive computation time (Graves 2016) over a recurrent cell."""
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 16)
        self.halt = nn.Linear(16, 1)

    def forward(self, x):
        b = x.shape[0]
        h = torch.zeros(b, 16)
        acc = torch.zeros(b)
        out = torch.zeros(b, 16)
        steps = 0
        while steps < 10 and bool((acc < 0.99).any()):
            h = self.cell(x, h)
            p = torch.sigmoid(self.halt(h)).squeeze(-1)
            running = (acc < 0.99).float()
            p = torch.minimum(p, 1 - acc) * running
            out = out + p[:, None] * h
            acc = acc + p
            steps += 1
        return out, acc


class MixtureOfDepths(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(16, 1)
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))

    def forward(self, x):  # b, n, 16
        b, n, d = x.shape
        k = max(1, n // 2)
        r = self.router(x).squeeze(-1)
        w, idx = r.topk(k, dim=1)
        sel = x.gather(1, idx[..., None].expand(-1, -1, d))
        upd = self.mlp(sel) * torch.sigmoid(w)[..., None]
        return x.scatter_add(1, idx[..., None].expand(-1, -1, d), upd)


class ViTInterpPos(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 16, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, 16))
        self.pos = nn.Parameter(torch.randn(1, 16, 4, 4))
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)

    def forward(self, x):
        p = self.patch(x)
        b, c, h, w = p.shape
        pos = F.interpolate(self.pos, size=(h, w), mode="bicubic", align_corners=False)
        tokens = (p + pos).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(b, -1, -1), tokens], 1)
        return self.layer(tokens)[:, 0]


class CausalTriu(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, -1)
        mask = torch.ones(n, n, dtype=torch.bool).triu(1)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(16)
        s = s.masked_fill(mask, float("-inf"))
        return s.softmax(-1) @ v


class BahdanauGreedy(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 16)
        self.enc = nn.GRU(16, 16, batch_first=True, bidirectional=True)
        self.Wa = nn.Linear(32, 16)
        self.Ua = nn.Linear(16, 16)
        self.va = nn.Linear(16, 1, bias=False)
        self.cell = nn.GRUCell(16 + 32, 16)
        self.out = nn.Linear(16, 12)

    def forward(self, src):  # 1, n
        enc, _ = self.enc(self.emb(src))
        keys = self.Wa(enc)
        h = enc.new_zeros(1, 16)
        tok = torch.tensor([0])
        res = []
        for _ in range(10):
            a = self.va(torch.tanh(keys + self.Ua(h)[:, None])).squeeze(-1).softmax(-1)
            ctx = (a[..., None] * enc).sum(1)
            h = self.cell(torch.cat([self.emb(tok), ctx], -1), h)
            tok = self.out(h).argmax(-1)
            if tok.item() == 1:
                break
            res.append(tok)
        return torch.cat(res) if res else torch.zeros(0, dtype=torch.long)


class CondConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.route = nn.Linear(4, 3)
        self.experts = nn.Parameter(torch.randn(3, 8, 4, 3, 3) * 0.2)

    def forward(self, x):
        b, c, h, w = x.shape
        r = torch.sigmoid(self.route(x.mean((2, 3))))
        weight = torch.einsum("be,eoikl->boikl", r, self.experts).reshape(b * 8, c, 3, 3)
        y = F.conv2d(x.reshape(1, b * c, h, w), weight, padding=1, groups=b)
        return y.view(b, 8, h, w)


class T5RelativeBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Embedding(32, 2)
        self.qkv = nn.Linear(16, 48)

    @staticmethod
    def bucket(rel, num_buckets=32, max_distance=64):
        num_buckets //= 2
        ret = (rel > 0).long() * num_buckets
        n = rel.abs()
        max_exact = num_buckets // 2
        is_small = n < max_exact
        val_large = max_exact + (torch.log(n.float() / max_exact + 1e-6) / math.log(max_distance / max_exact)
                                 * (num_buckets - max_exact)).long()
        val_large = torch.min(val_large, torch.full_like(val_large, num_buckets - 1))
        return ret + torch.where(is_small, n, val_large)

    def forward(self, x):
        b, n, _ = x.shape
        pos = torch.arange(n)
        rel = pos[None, :] - pos[:, None]
        bias = self.bias(self.bucket(rel)).permute(2, 0, 1)  # 2, n, n
        q, k, v = self.qkv(x).view(b, n, 3, 2, 8).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-1, -2) / math.sqrt(8) + bias
        return (s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, 16)


class TokenMerging(nn.Module):
    """ToMe bipartite soft matching (Bolya et al. 2023), r = n // 4 merges."""
    def forward(self, x):
        b, n, c = x.shape
        r = n // 4
        a, bb = x[:, ::2], x[:, 1::2]
        an, bn = F.normalize(a, dim=-1), F.normalize(bb, dim=-1)
        scores = an @ bn.transpose(-1, -2)
        node_max, node_idx = scores.max(-1)
        edge_idx = node_max.argsort(-1, descending=True)[..., None]
        unm_idx, src_idx = edge_idx[:, r:], edge_idx[:, :r]
        dst_idx = node_idx[..., None].gather(1, src_idx)
        unm = a.gather(1, unm_idx.expand(-1, -1, c))
        src = a.gather(1, src_idx.expand(-1, -1, c))
        dst = bb.scatter_reduce(1, dst_idx.expand(-1, -1, c), src, reduce="mean")
        return torch.cat([unm, dst], 1)


class RoutingTopKAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, -1)
        s = q @ k.transpose(-1, -2)
        kk = min(4, n)
        top, idx = s.topk(kk, -1)
        vv = v[:, None].expand(b, n, n, 16).gather(2, idx[..., None].expand(-1, -1, -1, 16))
        return (top.softmax(-1)[..., None] * vv).sum(2)


class BeamSearch(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 16)
        self.cell = nn.GRUCell(16, 16)
        self.out = nn.Linear(16, 10)

    def forward(self, h0):  # 1, 16
        beam = 3
        h = h0.expand(beam, -1)
        tokens = torch.zeros(beam, dtype=torch.long)
        scores = torch.tensor([0.0, -1e9, -1e9])
        seqs = torch.zeros(beam, 0, dtype=torch.long)
        for _ in range(6):
            h = self.cell(self.emb(tokens), h)
            logp = self.out(h).log_softmax(-1)
            total = (scores[:, None] + logp).flatten()
            scores, flat = total.topk(beam)
            origin, tokens = flat // 10, flat % 10
            h = h[origin]
            seqs = torch.cat([seqs[origin], tokens[:, None]], 1)
            if (tokens == 1).all():
                break
        return seqs, scores


class ALiBi(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.register_buffer("slopes", torch.tensor([0.5, 0.25]))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, 2, 8).permute(2, 0, 3, 1, 4)
        pos = torch.arange(n)
        dist = (pos[None, :] - pos[:, None]).float()
        bias = self.slopes[:, None, None] * dist
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(8) + bias
        s = s.masked_fill(~mask, float("-inf"))
        return (s.softmax(-1) @ v).transpose(1, 2).flatten(2)


class LocalWindow1D(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):  # b, n, 8
        b, n, c = x.shape
        w = 4
        pad = (w - n % w) % w
        xp = F.pad(x, (0, 0, 0, pad))
        win = xp.view(b, -1, w, c)
        att = (win @ win.transpose(-1, -2)).softmax(-1) @ self.proj(win)
        return att.reshape(b, -1, c)[:, :n]


class TransformerXLMemory(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, mem):  # x: b, n, 8; mem: b, m, 8
        cat = torch.cat([mem, x], 1)
        h = torch.tanh(self.lin(cat))
        out = h[:, -x.shape[1]:]
        new_mem = cat[:, -6:].detach()
        return out, new_mem


class DynamicTemporalStride(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)

    def forward(self, x):  # b, 4, t
        t = x.shape[-1]
        stride = max(1, t // 8)
        slow = x[:, :, ::stride]
        return self.conv(slow).mean(-1), self.conv(x).amax(-1)


class CTCGreedy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 5)

    def forward(self, x):  # t, 8
        best = self.lin(x).argmax(-1)
        collapsed = torch.unique_consecutive(best)
        return collapsed[collapsed != 0]


class SegmentMeanPool(nn.Module):
    def forward(self, x, bounds):  # x: n, 8; bounds: sorted k
        seg = torch.bucketize(torch.arange(x.shape[0]), bounds, right=True)
        out = torch.zeros(bounds.shape[0] + 1, 8).scatter_reduce(0, seg[:, None].expand(-1, 8), x, "mean", include_self=False)
        return out


class InterpScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = F.interpolate(self.c(x), scale_factor=0.5, mode="bilinear", align_corners=False, recompute_scale_factor=True)
        z = F.interpolate(y, size=x.shape[-2:], mode="nearest")
        return z + self.c(x), F.adaptive_max_pool2d(y, (3, 3))


class NestedLoops(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        outer = 0
        while outer < 4 and x.abs().mean() < 5:
            for _ in range(2):
                x = x + torch.tanh(self.lin(x))
            outer += 1
        return x, outer


class LengthRegulator(nn.Module):  # FastSpeech: each phoneme repeated by its predicted duration
    def __init__(self):
        super().__init__()
        self.duration = nn.Linear(8, 1)

    def forward(self, x):
        d = torch.clamp(torch.round(F.softplus(self.duration(x)).squeeze(-1) * 2), min=1).long()
        return torch.repeat_interleave(x, d, dim=0)


class KnnEdgeConv(nn.Module):  # DGCNN's edge convolution over the k nearest points
    def __init__(self):
        super().__init__()
        self.mlp = nn.Linear(6, 16)

    def forward(self, pts):
        b, n, _ = pts.shape
        idx = torch.cdist(pts, pts).topk(4, dim=-1, largest=False).indices
        nb = torch.gather(pts.unsqueeze(1).expand(b, n, n, 3), 2, idx.unsqueeze(-1).expand(b, n, 4, 3))
        center = pts.unsqueeze(2).expand_as(nb)
        return self.mlp(torch.cat([center, nb - center], -1)).max(2).values


class NucleusFilter(nn.Module):  # top-p filtering as sampling code writes it
    def forward(self, logits):
        sorted_logits, idx = logits.sort(-1, descending=True)
        remove = sorted_logits.softmax(-1).cumsum(-1) > 0.9
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        return logits.masked_fill(remove.scatter(-1, idx, remove), -1e9).softmax(-1)


class EinsumProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        y = torch.einsum("...d,de->...e", x, self.w)
        return torch.einsum("bnd,bmd->bnm", y, x).tril()


class RollCummax(nn.Module):
    def forward(self, x):
        return torch.roll(x, shifts=x.shape[-1] // 2, dims=-1).flip(-1) + x.cummax(-1).values


class MaskedScatter(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x).masked_scatter(x > 0, x.abs().sqrt() * 3)


class PairsBelowDiagonal(nn.Module):
    def forward(self, x):
        i, j = torch.tril_indices(x.shape[0], x.shape[0], offset=-1)
        return (x[i] * x[j]).sum(-1)


class UniqueRows(nn.Module):
    def forward(self, x):
        u, inv = torch.unique((x * 1.5).round().clamp(-1, 1), dim=0, return_inverse=True)
        return u.sum(0), inv
