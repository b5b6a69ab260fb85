#include "report.h"

namespace chorus::bench {

namespace {

std::string wrongText(double w) {
  return w < 0 ? "N/A" : std::to_string((long long)w);
}

void printMeasure(FILE* out, const Measure& m) {
  if (!m.valid) {
    fprintf(out, " %9s %9s %9s %7s %7s %6s", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  fprintf(out, " %9.2f %9.2f %9.2f %7.2f %7.2f %6s", m.us.median, m.us.min, m.us.max, m.algbw,
          m.busbw, wrongText(m.wrong).c_str());
}

}  // namespace

void CollReport::begin(const std::string& title) {
  if (fmt_ == Format::Csv) {
    fprintf(out_, "%s\n", csvHeaderColl().c_str());
  } else if (fmt_ == Format::Json) {
    fprintf(out_, "[\n");
  } else {
    fprintf(out_, "# %s\n#\n", title.c_str());
    fprintf(out_, "# %52s %-54s %s\n", "", "out-of-place", "in-place");
    fprintf(out_, "# %10s %11s %9s %6s %5s", "size", "count", "type", "redop", "root");
    for (int i = 0; i < 2; ++i)
      fprintf(out_, " %9s %9s %9s %7s %7s %6s", "time", "min", "max", "algbw", "busbw", "#wrong");
    fprintf(out_, "\n# %10s %11s %9s %6s %5s", "(B)", "(elements)", "", "", "");
    for (int i = 0; i < 2; ++i)
      fprintf(out_, " %9s %9s %9s %7s %7s %6s", "(us)", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
    fprintf(out_, "\n");
  }
  (void)full_;
  fflush(out_);
}

void CollReport::row(const CollRow& r) {
  busSum_ += r.headline().busbw;
  wrongSum_ += (r.oop.wrong > 0 ? r.oop.wrong : 0) + (r.ip.wrong > 0 ? r.ip.wrong : 0);
  if (fmt_ == Format::Csv) {
    fprintf(out_, "%s\n", csvLineColl(r).c_str());
  } else if (fmt_ == Format::Json) {
    fprintf(out_, "%s  %s", rows_ ? ",\n" : "", jsonColl(r).c_str());
  } else {
    fprintf(out_, "  %10zu %11zu %9s %6s %5d", r.bytes, r.count, r.type.c_str(), r.op.c_str(),
            r.root);
    printMeasure(out_, r.oop);
    printMeasure(out_, r.ip);
    fprintf(out_, "\n");
  }
  ++rows_;
  fflush(out_);
}

void CollReport::end() {
  if (fmt_ == Format::Json) fprintf(out_, "\n]\n");
  if (fmt_ == Format::Table) {
    fprintf(out_, "# Wrong elements       : %.0f %s\n", wrongSum_, wrongSum_ ? "FAILED" : "OK");
    fprintf(out_, "# Avg bus bandwidth    : %.3f GB/s over %d sizes (out-of-place)\n#\n",
            avgBusBw(), rows_);
  }
  fflush(out_);
}

void P2pReport::begin(const std::string& title, bool bandwidth) {
  bw_ = bandwidth;
  if (fmt_ == Format::Csv) {
    fprintf(out_, "%s\n", csvHeaderP2p().c_str());
  } else if (fmt_ == Format::Json) {
    fprintf(out_, "[\n");
  } else {
    fprintf(out_, "# %s\n", title.c_str());
    if (bw_)
      fprintf(out_, "# %-10s %18s", "Size", "Bandwidth (MB/s)");
    else
      fprintf(out_, "# %-10s %18s", "Size", "Latency (us)");
    if (full_)
      fprintf(out_, " %16s %16s %12s", bw_ ? "Min Time(us)" : "Min Latency(us)",
              bw_ ? "Max Time(us)" : "Max Latency(us)", "Iterations");
    fprintf(out_, "\n");
  }
  fflush(out_);
}

void P2pReport::row(const P2pRow& r) {
  if (fmt_ == Format::Csv) {
    fprintf(out_, "%s\n", csvLineP2p(r).c_str());
  } else if (fmt_ == Format::Json) {
    fprintf(out_, "%s  %s", rows_ ? ",\n" : "", jsonP2p(r).c_str());
  } else {
    fprintf(out_, "%-12zu %18.2f", r.bytes, bw_ ? r.mbps : r.us.median);
    if (full_) fprintf(out_, " %16.2f %16.2f %12d", r.us.min, r.us.max, r.iters);
    if (r.wrong > 0) fprintf(out_, "   %s bytes wrong", wrongText(r.wrong).c_str());
    fprintf(out_, "\n");
  }
  ++rows_;
  fflush(out_);
}

void P2pReport::end() {
  if (fmt_ == Format::Json) fprintf(out_, "\n]\n");
  fflush(out_);
}

}  // namespace chorus::bench
