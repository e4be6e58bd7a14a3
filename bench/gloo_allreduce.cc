// SPDX-License-Identifier: BSD-3-Clause
//
// gloo_allreduce: Gloo's allreduce_ring and allreduce_halving_doubling
// (int64 sum, TCP device on 127.0.0.1) over a list of sizes, for
// bench/bandwidth.py to set beside ftcoll. Started by ftcoll-run, whose
// FTCOLL_RANK, FTCOLL_SIZE and FTCOLL_RENDEZVOUS (a fresh directory: the
// FileStore) it reads. Each rank's input element i is (rank + 1) * (i + 1);
// every result is checked, and a wrong one makes the exit status 1.
//
//   ftcoll-run -n 4 -- gloo_allreduce --algo ring|hd --sizes 8,1024,...
//       [--iters K] [--warmup W] [--latency]
//
// Rank 0 prints "csv,gloo-ring,SIZE,AVG_US" (or gloo-hd) per size: the
// mean over K timed iterations after W untimed ones, a barrier before
// each.
//
// --latency: back to back, no barrier between operations (as ftcoll-bench
// times them), each timed on its own; every rank prints
// "lat,gloo-ALGO,SIZE,RANK,P50_US,MEAN_US" (bench/side_by_side.py takes
// the worst rank's median and the mean of the ranks' means).
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

static int env_int(const char *name)
{
    const char *v = std::getenv(name);
    if (v == nullptr) {
        std::fprintf(stderr, "gloo_allreduce: %s is not set (run it under "
                             "ftcoll-run)\n", name);
        std::exit(2);
    }
    return std::atoi(v);
}

static int iters_for(size_t size, int iters)
{
    if (iters > 0)
        return iters;
    if (size >= (size_t(16) << 20))
        return 3;
    if (size >= (size_t(1) << 20))
        return 10;
    return 100;
}

int main(int argc, char **argv)
{
    std::string algo = "ring", sizes = "8";
    int iters = 0, warmup = 1;
    bool latency = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--algo" && i + 1 < argc)
            algo = argv[++i];
        else if (a == "--sizes" && i + 1 < argc)
            sizes = argv[++i];
        else if (a == "--iters" && i + 1 < argc)
            iters = std::atoi(argv[++i]);
        else if (a == "--warmup" && i + 1 < argc)
            warmup = std::atoi(argv[++i]);
        else if (a == "--latency")
            latency = true;
        else {
            std::fprintf(stderr, "gloo_allreduce: unknown argument %s\n",
                         a.c_str());
            return 2;
        }
    }
    if (algo != "ring" && algo != "hd") {
        std::fprintf(stderr, "gloo_allreduce: --algo ring or hd\n");
        return 2;
    }
    int rank = env_int("FTCOLL_RANK"), n = env_int("FTCOLL_SIZE");
    const char *dir = std::getenv("FTCOLL_RENDEZVOUS");
    if (dir == nullptr) {
        std::fprintf(stderr, "gloo_allreduce: FTCOLL_RENDEZVOUS is not set\n");
        return 2;
    }

    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(dir);
    gloo::rendezvous::PrefixStore prefix("gloo", store);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
    ctx->connectFullMesh(prefix, dev);
    gloo::BarrierAllToAll barrier(ctx);

    int wrong = 0;
    std::stringstream ss(sizes);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        size_t size = std::strtoull(tok.c_str(), nullptr, 10);
        size_t count = size / 8 ? size / 8 : 1;
        std::vector<int64_t> data(count);
        std::vector<int64_t *> ptrs{data.data()};
        std::unique_ptr<gloo::Algorithm> ar;
        if (algo == "ring")
            ar.reset(new gloo::AllreduceRing<int64_t>(ctx, ptrs, (int)count));
        else
            ar.reset(new gloo::AllreduceHalvingDoubling<int64_t>(ctx, ptrs,
                                                                 (int)count));
        int k = iters_for(size, iters);
        double t = 0;
        const int64_t tri = int64_t(n) * (n + 1) / 2;
        std::vector<double> lat;
        if (latency)
            barrier.run();
        for (int it = 0; it < warmup + k; it++) {
            // In place: the input again before every run, untimed.
            for (size_t i = 0; i < count; i++)
                data[i] = int64_t(rank + 1) * int64_t(i + 1);
            if (!latency)
                barrier.run();
            auto t0 = std::chrono::steady_clock::now();
            ar->run();
            auto t1 = std::chrono::steady_clock::now();
            if (it >= warmup) {
                double dt = std::chrono::duration<double>(t1 - t0).count();
                t += dt;
                if (latency)
                    lat.push_back(dt);
            }
            for (size_t i = 0; i < count; i++)
                if (data[i] != tri * int64_t(i + 1)) {
                    wrong++;
                    break;
                }
        }
        if (latency && !lat.empty()) {
            std::sort(lat.begin(), lat.end());
            std::printf("lat,gloo-%s,%zu,%d,%.3f,%.3f\n", algo.c_str(), size,
                        rank, lat[(lat.size() - 1) / 2] * 1e6,
                        t / double(lat.size()) * 1e6);
        } else if (rank == 0) {
            std::printf("csv,gloo-%s,%zu,%.3f\n", algo.c_str(), size,
                        t / k * 1e6);
        }
        std::fflush(stdout);
    }
    if (wrong)
        std::fprintf(stderr, "gloo_allreduce: rank %d: %d wrong results\n",
                     rank, wrong);
    barrier.run();
    return wrong ? 1 : 0;
}
