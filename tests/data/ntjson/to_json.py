#!/usr/bin/env python3
"""Write an nccl-tests text log's numbers as the JSON nccl-tests -J writes.

The layout is NVIDIA/nccl-tests src/util.cu at a0b82b2 (2.19.6,
JSON_FILE_VERSION 3): one line, no spaces, doubles as "%lf", root as the
"%6i" string, booleans as the strings "true"/"false", `devices` one entry a
process. No public measured -J file was found (docs/decisions/formats.md), so
the tests read files made by this script from shipped text logs.

usage: to_json.py LOG.txt PROGRAM NCCL_VERSION [--per-iter [--text]] > LOG.json
  --per-iter: add -I 1's per-iteration objects, made up from each row's time
  (min 0.9 t, max 1.3 t, p99 1.2 t, cv 4 %): for the reader's test only.
  --text: instead of JSON, the text log -I 1 prints with those numbers
  (writeResultHeader's columns, writePerIterReport's "%7s" fields).
"""
import re
import sys


def s(x):
    return '"' + x.replace('\\', '\\\\').replace('"', '\\"') + '"'


def d(x):
    return '%f' % x


def group(t, a, b, w, per_iter):
    g = '{"time":%s,"alg_bw":%s,"bus_bw":%s,"nwrong":%s}' % (d(t), d(a), d(b), 'null' if w is None else d(w))
    return g


def per_iter_obj(t):
    return ('{"skipped_iterations":0,"min_us":%s,"max_us":%s,"avg_us":%s,"p50_us":%s,"p95_us":%s,"p99_us":%s,'
            '"stdev_us":%s,"cv_pct":%s,"times_us":[%s,%s]}' %
            (d(0.9 * t), d(1.3 * t), d(t), d(t), d(1.1 * t), d(1.2 * t), d(0.04 * t), d(4.0), d(0.9 * t), d(1.3 * t)))


def text_per_iter(path):
    """The log with -I 1's columns: i_min i_max i_p99 i_cv% after each group."""
    def f7(x):                                 # getFloatStr(x, 7): the widest of .2f, .1f, .0f that fits
        for fmt in ('%7.2f', '%7.1f', '%7.0f'):
            if len(fmt % x) <= 7:
                return fmt % x
        return '%7.1e' % x
    for line in open(path):
        tok = line.split()
        if line.startswith('#       size'):
            g = 'time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv%'
            sys.stdout.write('#       size         count      type   redop    root     %s     %s\n' % (g, g))
        elif len(tok) == 13 and tok[0].isdigit():
            out = '  '.join('%12s' % t for t in tok[:2]) + '  ' + '  '.join('%6s' % t for t in tok[2:5])
            for k in (5, 9):
                t = float(tok[k])
                out += '  %7s  %6s  %6s  %6s' % tuple(tok[k:k + 4])
                out += '  ' + '  '.join(f7(x) for x in (0.9 * t, 1.3 * t, 1.2 * t, 4.0))
            sys.stdout.write(out + '\n')
        else:
            sys.stdout.write(line)


def main():
    path, prog, ver = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if '--text' in sys.argv:
        return text_per_iter(path)
    per_iter = '--per-iter' in sys.argv
    hdr, devices, rows = None, [], []
    for line in open(path):
        m = re.search(r'nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: (\d+)\((\w+)\) warmup iters: (\d+) '
                      r'iters: (\d+) agg iters: (\d+) validation: (\d+) graph: (\d+)', line)
        if m:
            hdr = m.groups()
        m = re.match(r'#\s+Rank\s+(\d+) Group\s+(\d+) Pid\s+(\d+) on\s+(\S+) device\s+(\d+) \[([^\]]*)\] (.*)', line)
        if m:
            devices.append(m.groups())
        tok = line.split()
        if len(tok) == 13 and tok[0].isdigit():
            rows.append(tok)
    nt, ng = int(hdr[0]), int(hdr[1])
    out = ['{"version":3,"start_time":"2026-12-05 03:00:00","args":[%s,"-b","%s","-e","%s"],"env":[%s],"nccl_version":%d'
           % (s(prog), hdr[2], hdr[3], s('HOME=/root'), ver)]
    cfg = ('"config":{"nthreads":%d,"ngpus":%d,"minimum_bytes":%s,"maximum_bytes":%s,"%s":%s,"warmup_iters":%s,'
           '"iterations":%s,"aggregated_iterations":%s,"validation":%s,"graph":%s,"blocking_collectives":"false",'
           '"per_iter_timing":"%s","per_iter_skip":0,"parallel_init":"false","devices":[' %
           (nt, ng, hdr[2], hdr[3], 'step_factor' if hdr[5] == 'factor' else 'step_bytes', hdr[4], hdr[6], hdr[7], hdr[8],
            hdr[9], hdr[10], 'true' if per_iter else 'false'))
    procs = devices[::nt * ng]                 # parseRankInfo: each process's first line
    cfg += ','.join('{"rank":%s,"group":%s,"pid":%s,"hostname":%s,"device":%s,"device_hex":%s,"device_info":%s}' %
                    (r, g, p, s(h), dv, s(x), s(info.strip())) for r, g, p, h, dv, x, info in procs) + ']}'
    out.append(cfg)
    res = []
    for t in rows:
        w = [None if t[8] == 'N/A' else float(t[8]), None if t[12] == 'N/A' else float(t[12])]
        r = '{"size":%s,"count":%s,"type":%s,"redop":%s,"root":%s' % (t[0], t[1], s(t[2]), s(t[3]), s('%6i' % int(t[4])))
        r += ',"out_of_place":' + group(float(t[5]), float(t[6]), float(t[7]), w[0], per_iter)
        if per_iter:
            r += ',"out_of_place_per_iter":' + per_iter_obj(float(t[5]))
        r += ',"in_place":' + group(float(t[9]), float(t[10]), float(t[11]), w[1], per_iter)
        if per_iter:
            r += ',"in_place_per_iter":' + per_iter_obj(float(t[9]))
        r += ',"actual_iterations":%s,"experiment_name":""}' % hdr[7]
        res.append(r)
    out.append('"results":[' + ','.join(res) + ']')
    out.append('"out_of_bounds":{"count":0,"okay":"true"},"average_bus_bandwidth":{"bandwidth":0.000000,"okay":"unchecked"}')
    out.append('"errors":[],"end_time":"2026-12-05 03:00:10"}')
    sys.stdout.write(','.join(out))


main()
