#!/usr/bin/python3
"""perf/torch_compare.sh's tables and plot from the JSON it wrote:
    perf/torch_summary.py OUT_DIR PLOT.png RANKS...
DDP: per backend and rank count, the median over runs of the second epoch's samples/s, with the
fastest and slowest run. Plot: allreduce busbw against message size (gnuplot)."""
import glob
import json
import os
import statistics
import subprocess
import sys


def ddp_table(out, ranks):
    print(f"# DDP on perf/pytorch_ddp.py's MLP: samples/s of epoch 2, median [slowest, fastest] "
          f"over runs")
    print(f"{'ranks':>5} {'runs':>4} {'chorus samples/s':>28} {'gloo samples/s':>28} "
          f"{'chorus/gloo':>11}")
    for n in ranks:
        med = {}
        cells = {}
        for b in ("chorus", "gloo"):
            sps = [json.load(open(f))["epochs"][-1]["samples_per_s"]
                   for f in sorted(glob.glob(f"{out}/ddp-{b}-{n}-*.json"))]
            if not sps:
                return
            med[b] = statistics.median(sps)
            cells[b] = f"{med[b]:.0f} [{min(sps):.0f}, {max(sps):.0f}]"
        print(f"{n:>5} {len(sps):>4} {cells['chorus']:>28} {cells['gloo']:>28} "
              f"{med['chorus'] / med['gloo']:>10.2f}x")


def allreduce_ratios(out, ranks):
    print("# allreduce busbw (GB/s, from the median call) at >= 1 MiB")
    for n in ranks:
        rows = json.load(open(f"{out}/allreduce-{n}.json"))["rows"]
        big = [r for r in rows if r["bytes"] >= 1 << 20]
        ratios = [r["chorus"]["busbw_GBps"] / r["gloo"]["busbw_GBps"] for r in big]
        print(f"{n} ranks: chorus {min(r['chorus']['busbw_GBps'] for r in big):.2f}.."
              f"{max(r['chorus']['busbw_GBps'] for r in big):.2f}, gloo "
              f"{min(r['gloo']['busbw_GBps'] for r in big):.2f}.."
              f"{max(r['gloo']['busbw_GBps'] for r in big):.2f}; chorus/gloo "
              f"{min(ratios):.1f}x..{max(ratios):.1f}x")


def plot(out, png, ranks):
    blocks, curves = [], []
    for n in ranks:
        rows = json.load(open(f"{out}/allreduce-{n}.json"))["rows"]
        for b, style in (("chorus", "lw 2"), ("gloo", "lw 2 dt 2")):
            name = f"d_{b}_{n}"
            blocks.append(f"${name} << EOD\n" + "\n".join(
                f"{r['bytes']} {r[b]['busbw_GBps']}" for r in rows) + "\nEOD")
            curves.append(f"${name} using 1:2 with linespoints {style} title '{b}, {n} processes'")
    script = "\n".join(blocks) + f"""
set terminal pngcairo size 900,560
set output '{png}'
set title 'torch.distributed all\\_reduce (float32 sum, CPU tensors): chorus vs gloo backend'
set logscale xy
set xlabel 'message size (bytes)'
set ylabel 'busbw (GB/s), median of rounds'
set key top left
set grid
set format y '%g'
set xtics ("8" 8, "128" 128, "2K" 2048, "32K" 32768, "512K" 524288, "8M" 8388608, "64M" 67108864)
plot {', '.join(curves)}
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
        print(f"plot: {png}")
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"no plot ({e}); install gnuplot-nox")


def main():
    out, png, ranks = sys.argv[1], sys.argv[2], [int(r) for r in sys.argv[3:]]
    ddp_table(out, ranks)
    allreduce_ratios(out, ranks)
    plot(out, png, ranks)


if __name__ == "__main__":
    main()
