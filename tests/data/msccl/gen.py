#!/usr/bin/env python3
"""Write the MSCCL algorithms the tests read (tests/test_msccl.c), in the XML
msccl-tools' ncclize writes (its old format: steps numbered by `s`, as
msccl-executor-nccl reads them). Written by hand for the tests, not by baton's
exporter, so that the import is checked against an independent description.
Run from this directory: python3 gen.py"""


def step(s, t, srcbuf="o", srcoff=-1, dstbuf="o", dstoff=-1, cnt=1, depid=-1, deps=-1, hasdep=0):
    return (f'      <step s="{s}" type="{t}" srcbuf="{srcbuf}" srcoff="{srcoff}" dstbuf="{dstbuf}" '
            f'dstoff="{dstoff}" cnt="{cnt}" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>')


def write(path, name, coll, p, nchunks, gpus, nchannels=1, ichunks=None, ochunks=None):
    out = [f'<algo name="{name}" proto="Simple" nchannels="{nchannels}" nchunksperloop="{nchunks}" '
           f'ngpus="{p}" coll="{coll}" inplace="1">']
    for r in range(p):
        out.append(f'  <gpu id="{r}" i_chunks="{ichunks if ichunks is not None else nchunks}" '
                   f'o_chunks="{ochunks if ochunks is not None else nchunks}" s_chunks="0">')
        for tb, (send, recv, chan, steps) in enumerate(gpus[r]):
            out.append(f'    <tb id="{tb}" send="{send}" recv="{recv}" chan="{chan}">')
            out += [step(i, *st[:1], **st[1]) for i, st in enumerate(steps)]
            out.append('    </tb>')
        out.append('  </gpu>')
    out.append('</algo>')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def ring_allreduce(p, broken=False):
    """One ring, p chunks: p-1 reduce steps (rrs, the last rrcs), p-1 copy steps."""
    gpus = []
    for r in range(p):
        st = [("s", dict(srcbuf="i", srcoff=r))]
        for k in range(1, p):
            c = (r - k) % p
            st.append(("rrs" if k < p - 1 else "rrcs", dict(srcbuf="i", srcoff=c, dstbuf="o", dstoff=c)))
        for j in range(1, p):
            c = (r + 1 - j) % p
            if broken and r == 3 and j == 2:
                c = (c + 1) % p          # rank 3 files a forwarded block in its neighbour's place
            st.append(("rcs" if j < p - 1 else "r", dict(dstoff=c)))
        gpus.append([((r + 1) % p, (r - 1) % p, 0, st)])
    return gpus


def allpairs_allreduce(p):
    """Thread block k-1 talks to r+k: send block r+k, add block r from r-k;
    when block r is whole (thread block 0 waits on every other's add, then the
    others on it, one after another), send block r to r+k, take block r-k."""
    gpus = []
    for r in range(p):
        tbs = []
        for k in range(1, p):
            st = [("s", dict(srcbuf="i", srcoff=(r + k) % p)),
                  ("rrc", dict(srcbuf="i", srcoff=r, dstbuf="i", dstoff=r, hasdep=1))]
            if k == 1:
                st += [("nop", dict(depid=j - 1, deps=1, hasdep=int(j == p - 1))) for j in range(2, p)]
            else:
                prev = 2 + (p - 2) - 1 if k == 2 else 2      # thread block k-2's last wait
                st.append(("nop", dict(depid=k - 2, deps=prev if k == 2 and p > 2 else 2, hasdep=int(k < p - 1))))
            st += [("s", dict(srcoff=r)), ("r", dict(dstoff=(r - k) % p))]
            tbs.append(((r + k) % p, (r - k) % p, 0, st))
        gpus.append(tbs)
    return gpus


def hier_allgather(nodes, g):
    """Two nodes of g: swap my block with my peer in the other node (thread
    block 0), then, once it is here, carry the blocks of each node round my
    node's ring (thread block 1: this node's blocks, 2: the other node's)."""
    assert nodes == 2
    p = nodes * g
    gpus = []
    for r in range(p):
        n, l = divmod(r, g)
        peer = (1 - n) * g + l
        right, left = n * g + (l + 1) % g, n * g + (l - 1) % g
        tb0 = (peer, peer, 0, [("s", dict(srcbuf="i", srcoff=0, hasdep=0)), ("r", dict(dstoff=peer, hasdep=1))])
        tbs = [tb0]
        for which, node in ((1, n), (2, 1 - n)):
            st = [("s", dict(srcoff=node * g + l, depid=0, deps=1))]
            for j in range(1, g):
                st.append(("rcs" if j < g - 1 else "r", dict(dstoff=node * g + (l - j) % g)))
            tbs.append((right, left, which - 1, st))
        gpus.append(tbs)
    return gpus


if __name__ == "__main__":
    for p in (2, 5, 8):
        write(f"ring_allreduce_{p}.xml", f"ring allreduce {p}", "allreduce", p, p, ring_allreduce(p))
    write("broken_ring_allreduce_8.xml", "ring allreduce 8, a wrong chunk", "allreduce", 8, 8, ring_allreduce(8, True))
    for p in (3, 8):
        write(f"allpairs_allreduce_{p}.xml", f"all-pairs allreduce {p}", "allreduce", p, p, allpairs_allreduce(p))
    write("hier_allgather_2x4.xml", "hierarchical allgather 2x4", "allgather", 8, 8, hier_allgather(2, 4),
          nchannels=2, ichunks=1, ochunks=8)
