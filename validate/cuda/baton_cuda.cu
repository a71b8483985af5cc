// baton_cuda.cu - baton's schedules on real GPUs, and NCCL as the reference.
//
//   baton-cuda -c COLL -a ALGO -p RANKS --sizes LO:HI [--reps R] [-o LOG]
//   baton-cuda --nccl -c COLL --sizes LO:HI [--reps R] [-o LOG]    (ranks = GPUs)
//   baton-cuda --copy-rate                                         (GB/s of a device copy)
//
// Ranks live on GPUs round-robin (one GPU: p virtual ranks, separate device
// buffers). Every stream of the schedule (rank x channel) gets a CUDA stream
// on its rank's GPU. A send copies its chunks into a staging buffer on the
// sender's GPU and records an event; the receive waits for that event, then
// copies (peer copy) or adds (a byte-add kernel reading the staging buffer)
// into its own buffer. A host loop issues the programs' operations in an
// order the schedule allows (the same rules as the simulator); the GPU runs
// them concurrently. Times are wall clock from the first issue to the last
// completion, the median of R runs after a warm-up; a sample of every rank's
// bytes is checked against the collective's result. Output: nccl-tests
// format, which `baton calibrate` and `baton validate` read.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "shim.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "baton-cuda: %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define NK(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
    fprintf(stderr, "baton-cuda: %s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(r_)); exit(1); } } while (0)

__global__ void add_bytes(unsigned char *dst, const unsigned char *src, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = (unsigned char)(dst[i] + src[i]);
}

struct Msg { int from; unsigned char *stage; unsigned long long bytes; cudaEvent_t ready; int dev; };

struct Run {
    bc_sched_t *s;
    int p, C, ngpu;
    std::vector<char> peer;                  // [d * ngpu + e]: kernels on d may read e's memory
    unsigned long long n;
    std::vector<unsigned char *> buf;        // per rank
    std::vector<cudaStream_t> st;            // per stream
    std::vector<std::deque<Msg>> inbox;      // per stream
    int dev(int stream) const { return (stream / C) % ngpu; }
};

// Let every GPU read every other one's memory where the hardware allows: the
// add kernel reads the sender's staging buffer in place. Where it does not,
// take() first copies the message to the receiver (cudaMemcpyPeerAsync).
static void enable_peers(Run &r) {
    r.peer.assign((size_t)r.ngpu * r.ngpu, 0);
    for (int d = 0; d < r.ngpu; d++)
        for (int e = 0; e < r.ngpu; e++) {
            int can = d == e;
            if (d != e && cudaDeviceCanAccessPeer(&can, d, e) != cudaSuccess) can = 0;
            if (can && d != e) {
                CK(cudaSetDevice(d));
                cudaError_t rc = cudaDeviceEnablePeerAccess(e, 0);
                if (rc == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
                else if (rc != cudaSuccess) { (void)cudaGetLastError(); can = 0; }
            }
            r.peer[(size_t)d * r.ngpu + e] = (char)can;
        }
}

static void post(Run &r, int si, const bc_op_t &op) {
    int d = r.dev(si);
    Msg m{si, nullptr, op.bytes, nullptr, d};
    CK(cudaSetDevice(d));
    CK(cudaMallocAsync((void **)&m.stage, op.bytes ? op.bytes : 1, r.st[si]));
    unsigned long long at = 0;
    for (int k = 0; k < op.nsrc; k++) {
        CK(cudaMemcpyAsync(m.stage + at, r.buf[si / r.C] + op.src[k].off, op.src[k].len, cudaMemcpyDeviceToDevice, r.st[si]));
        at += op.src[k].len;
    }
    CK(cudaEventCreateWithFlags(&m.ready, cudaEventDisableTiming));
    CK(cudaEventRecord(m.ready, r.st[si]));
    r.inbox[op.to_stream].push_back(m);
}

// Take the oldest message from stream `from`, consume it into our buffer.
static bool take(Run &r, int si, const bc_op_t &op) {
    auto &q = r.inbox[si];
    auto it = std::find_if(q.begin(), q.end(), [&](const Msg &m) { return m.from == op.from_stream; });
    if (it == q.end()) return false;
    Msg m = *it;
    q.erase(it);
    int me = r.dev(si);
    CK(cudaSetDevice(me));
    CK(cudaStreamWaitEvent(r.st[si], m.ready, 0));
    unsigned char *src = m.stage, *local = nullptr;
    if (op.recv == 2 && !r.peer[(size_t)me * r.ngpu + m.dev]) {      // adds read local memory only
        CK(cudaMallocAsync((void **)&local, m.bytes ? m.bytes : 1, r.st[si]));
        CK(cudaMemcpyPeerAsync(local, me, m.stage, m.dev, m.bytes, r.st[si]));
        src = local;
    }
    unsigned long long at = 0;
    for (int k = 0; k < op.ndst; k++) {
        unsigned char *dst = r.buf[si / r.C] + op.dst[k].off;
        if (op.recv == 2 && op.dst[k].len)
            add_bytes<<<(unsigned)std::min<unsigned long long>(1024, (op.dst[k].len + 255) / 256), 256, 0, r.st[si]>>>(dst, src + at, op.dst[k].len);
        else
            CK(cudaMemcpyAsync(dst, m.stage + at, op.dst[k].len, cudaMemcpyDefault, r.st[si]));
        at += op.dst[k].len;
    }
    if (op.recv == 2) CK(cudaGetLastError());                      // a launch that failed says so here
    if (local) CK(cudaFreeAsync(local, r.st[si]));
    cudaEvent_t used;
    CK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));
    CK(cudaEventRecord(used, r.st[si]));
    CK(cudaSetDevice(m.dev));
    CK(cudaStreamWaitEvent(r.st[m.from], used, 0));      // free on the allocating GPU, once consumed
    CK(cudaFreeAsync(m.stage, r.st[m.from]));
    CK(cudaEventDestroy(used));
    CK(cudaEventDestroy(m.ready));
    return true;
}

// Issue every program to the end, in an order the schedule allows.
static void issue(Run &r) {
    int ns = r.p * r.C, left = ns;
    std::vector<unsigned> pc(ns, 0);
    std::vector<char> got(ns, 0), done(ns, 0);
    for (int si = 0; si < ns; si++) {                    // leading sends first, as in the engine
        bc_op_t op;
        while (bc_op(r.s, si, pc[si], &op) && !op.recv) { if (op.send) post(r, si, op); pc[si]++; }
    }
    while (left > 0) {
        bool moved = false;
        for (int si = 0; si < ns; si++) {
            bc_op_t op;
            while (!done[si]) {
                if (!bc_op(r.s, si, pc[si], &op)) { done[si] = 1; left--; moved = true; break; }
                if (op.recv && !got[si] && !(got[si] = take(r, si, op))) break;
                if (op.send) post(r, si, op);
                pc[si]++;
                got[si] = 0;
                moved = true;
            }
        }
        if (!moved) { fprintf(stderr, "baton-cuda: the schedule is stuck\n"); exit(1); }
    }
}

static void sync_all(int ngpu) {
    for (int d = 0; d < ngpu; d++) { CK(cudaSetDevice(d)); CK(cudaDeviceSynchronize()); }
}

static void fill(Run &r) {
    std::vector<unsigned char> h(r.n);
    for (int k = 0; k < r.p; k++) {
        for (unsigned long long i = 0; i < r.n; i++) h[i] = bc_fill(k, i);
        CK(cudaSetDevice(k % r.ngpu));
        CK(cudaMemcpy(r.buf[k], h.data(), r.n, cudaMemcpyHostToDevice));
    }
}

static bool check(Run &r) {
    unsigned long long step = r.n / 4096 + 1;
    for (int k = 0; k < r.p; k++)
        for (unsigned long long i = 0; i < r.n; i += step) {
            unsigned char v;
            CK(cudaSetDevice(k % r.ngpu));
            CK(cudaMemcpy(&v, r.buf[k] + i, 1, cudaMemcpyDeviceToHost));
            int w = bc_expect(r.s, k, i);
            if (w >= 0 && v != w) { fprintf(stderr, "baton-cuda: rank %d byte %llu is %d, want %d\n", k, i, v, w); return false; }
        }
    return true;
}

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static double run_baton(const char *coll, const char *algo, int p, unsigned long long bytes, int reps, int ngpu) {
    char err[256];
    Run r;
    r.s = bc_build(coll, algo, p, bytes, err, sizeof err);
    if (!r.s) { fprintf(stderr, "baton-cuda: %s\n", err); exit(2); }
    r.p = p;
    r.C = bc_channels(r.s);
    r.ngpu = ngpu;
    enable_peers(r);
    r.n = bc_buffer_bytes(r.s);
    r.buf.resize(p);
    r.st.resize(p * r.C);
    r.inbox.resize(p * r.C);
    for (int k = 0; k < p; k++) { CK(cudaSetDevice(k % ngpu)); CK(cudaMalloc((void **)&r.buf[k], r.n ? r.n : 1)); }
    for (int si = 0; si < p * r.C; si++) { CK(cudaSetDevice(r.dev(si))); CK(cudaStreamCreateWithFlags(&r.st[si], cudaStreamNonBlocking)); }
    std::vector<double> t;
    for (int rep = 0; rep <= reps; rep++) {
        fill(r);
        sync_all(ngpu);
        double t0 = now();
        issue(r);
        sync_all(ngpu);
        if (rep) t.push_back(now() - t0);
        if (rep == reps && !check(r)) exit(1);
    }
    for (int si = 0; si < p * r.C; si++) { CK(cudaSetDevice(r.dev(si))); CK(cudaStreamDestroy(r.st[si])); }
    for (int k = 0; k < p; k++) { CK(cudaSetDevice(k % ngpu)); CK(cudaFree(r.buf[k])); }
    bc_free(r.s);
    return median(t);
}

static double run_nccl(const char *coll, unsigned long long bytes, int reps, int ngpu) {
    std::vector<ncclComm_t> comm(ngpu);
    std::vector<int> devs(ngpu);
    std::vector<cudaStream_t> st(ngpu);
    std::vector<unsigned char *> sb(ngpu), rb(ngpu);
    for (int d = 0; d < ngpu; d++) devs[d] = d;
    NK(ncclCommInitAll(comm.data(), ngpu, devs.data()));
    std::string c = coll;
    unsigned long long chunk = (c == "reducescatter" || c == "allgather") ? bytes / ngpu : bytes;
    for (int d = 0; d < ngpu; d++) {
        CK(cudaSetDevice(d));
        CK(cudaStreamCreate(&st[d]));
        CK(cudaMalloc((void **)&sb[d], bytes ? bytes : 1));
        CK(cudaMalloc((void **)&rb[d], bytes ? bytes : 1));
    }
    std::vector<double> t;
    for (int rep = 0; rep <= reps; rep++) {
        double t0 = now();
        NK(ncclGroupStart());
        for (int d = 0; d < ngpu; d++) {
            if (c == "allreduce") NK(ncclAllReduce(sb[d], rb[d], bytes, ncclUint8, ncclSum, comm[d], st[d]));
            else if (c == "reducescatter") NK(ncclReduceScatter(sb[d], rb[d], chunk, ncclUint8, ncclSum, comm[d], st[d]));
            else if (c == "allgather") NK(ncclAllGather(sb[d], rb[d], chunk, ncclUint8, comm[d], st[d]));
            else if (c == "broadcast") NK(ncclBroadcast(sb[d], rb[d], bytes, ncclUint8, 0, comm[d], st[d]));
            else if (c == "reduce") NK(ncclReduce(sb[d], rb[d], bytes, ncclUint8, ncclSum, 0, comm[d], st[d]));
            else { fprintf(stderr, "baton-cuda: --nccl runs allreduce, reducescatter, allgather, broadcast, reduce\n"); exit(2); }
        }
        NK(ncclGroupEnd());
        sync_all(ngpu);
        if (rep) t.push_back(now() - t0);
    }
    for (int d = 0; d < ngpu; d++) {
        CK(cudaSetDevice(d));
        CK(cudaFree(sb[d]));
        CK(cudaFree(rb[d]));
        CK(cudaStreamDestroy(st[d]));
        ncclCommDestroy(comm[d]);
    }
    return median(t);
}

static double copy_rate() {
    unsigned long long n = 1ull << 30;
    unsigned char *a, *b;
    CK(cudaSetDevice(0));
    CK(cudaMalloc((void **)&a, n));
    CK(cudaMalloc((void **)&b, n));
    std::vector<double> t;
    for (int i = 0; i < 6; i++) {
        double t0 = now();
        CK(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice));
        CK(cudaDeviceSynchronize());
        if (i) t.push_back(now() - t0);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    return n / median(t) / 1e9;                       // bytes copied per second (each read once, written once)
}

int main(int argc, char **argv) {
    const char *coll = "allreduce", *algo = "ring", *out = nullptr;
    int p = 8, reps = 5, nccl = 0, rate = 0;
    unsigned long long lo = 1024, hi = 1ull << 28;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() { if (i + 1 >= argc) { fprintf(stderr, "baton-cuda: %s needs a value\n", a.c_str()); exit(2); } return argv[++i]; };
        if (a == "-c") coll = next();
        else if (a == "-a") algo = next();
        else if (a == "-p") p = atoi(next());
        else if (a == "--reps") reps = atoi(next());
        else if (a == "-o") out = next();
        else if (a == "--nccl") nccl = 1;
        else if (a == "--copy-rate") rate = 1;
        else if (a == "--sizes") { if (sscanf(next(), "%llu:%llu", &lo, &hi) != 2 || !lo || hi < lo) { fprintf(stderr, "baton-cuda: --sizes LO:HI in bytes\n"); return 2; } }
        else { fprintf(stderr, "usage: baton-cuda [-c COLL] [-a ALGO] [-p RANKS] [--sizes LO:HI] [--reps R] [-o LOG] [--nccl] [--copy-rate]\n"); return 2; }
    }
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0) { fprintf(stderr, "baton-cuda: no GPU\n"); return 1; }
    if (rate) { printf("device copy rate: %.1f GB/s\n", copy_rate()); return 0; }
    std::vector<unsigned long long> sizes;
    std::vector<double> us;
    int ranks = nccl ? ngpu : p;
    for (unsigned long long n = lo; n <= hi; n *= 2) {
        sizes.push_back(n);
        us.push_back(1e6 * (nccl ? run_nccl(coll, n, reps, ngpu) : run_baton(coll, algo, p, n, reps, ngpu)));
    }
    return bc_write_log(out, coll, ranks, sizes.data(), us.data(), (int)sizes.size()) == 0 ? 0 : 1;
}
