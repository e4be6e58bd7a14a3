/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_allreduce: Open MPI's MPI_Allreduce (int64 sum) over a list of
 * sizes, for bench/bandwidth.py to set beside ftcoll. Each rank's input
 * element i is (rank + 1) * (i + 1); every result is checked (element i
 * must be n (n + 1) / 2 * (i + 1)) and a wrong one makes the exit status 1.
 *
 *   mpirun -np 4 mpi_allreduce --sizes 8,1024,... [--iters K] [--warmup W]
 *       [--latency]
 *
 * Rank 0 prints "csv,mpi,SIZE,AVG_US" per size (the mean over K timed
 * iterations, after W untimed ones; a barrier before each size).
 *
 * --latency: back to back, no barrier between operations (as ftcoll-bench
 * times them), each operation timed on its own; rank 0 prints
 * "lat,mpi,SIZE,P50_US,MEAN_US": the worst rank's median and the mean
 * over ranks of each rank's mean, ftcoll-bench's latency row's p50 and
 * avg (bench/side_by_side.py sets them beside each other).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double iters_for(size_t size, int iters)
{
    /* Fewer repetitions for large sizes: a 256 MiB allreduce is seconds. */
    if (iters > 0)
        return iters;
    if (size >= ((size_t)16 << 20))
        return 3;
    if (size >= ((size_t)1 << 20))
        return 10;
    return 100;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* --latency for one size: returns the number of wrong results. */
static int latency_run(const int64_t *in, int64_t *out, size_t count, int k,
                       int warmup, int rank, int n, size_t size)
{
    double *lat = malloc(sizeof(double) * (size_t)k);
    if (lat == NULL)
        MPI_Abort(MPI_COMM_WORLD, 4);
    int wrong = 0;
    const int64_t tri = (int64_t)n * (n + 1) / 2;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < warmup + k; it++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(in, out, (int)count, MPI_INT64_T, MPI_SUM,
                      MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0;
        if (it >= warmup)
            lat[it - warmup] = dt;
        /* Checked after the clock stops, as ftcoll-bench does. */
        for (size_t i = 0; i < count; i++)
            if (out[i] != tri * (int64_t)(i + 1)) {
                wrong++;
                break;
            }
    }
    double sum = 0;
    for (int i = 0; i < k; i++)
        sum += lat[i];
    qsort(lat, (size_t)k, sizeof(double), cmp_double);
    double mine[2] = {lat[(k - 1) / 2], sum / k}, p50, mean;
    MPI_Reduce(&mine[0], &p50, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine[1], &mean, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("lat,mpi,%zu,%.3f,%.3f\n", size, p50 * 1e6, mean / n * 1e6);
    free(lat);
    return wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *sizes = "8";
    int iters = 0, warmup = 1, latency = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--latency") == 0)
            latency = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "mpi_allreduce: unknown argument %s\n",
                        argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int wrong = 0;
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
        size_t size = strtoull(tok, NULL, 10);
        size_t count = size / 8 ? size / 8 : 1;
        int64_t *in = malloc(count * 8), *out = malloc(count * 8);
        if (in == NULL || out == NULL)
            MPI_Abort(MPI_COMM_WORLD, 4);
        for (size_t i = 0; i < count; i++)
            in[i] = (int64_t)(rank + 1) * (int64_t)(i + 1);
        int k = (int)iters_for(size, iters);
        if (latency) {
            wrong += latency_run(in, out, count, k, warmup, rank, n, size);
            free(in);
            free(out);
            continue;
        }
        double t = 0;
        for (int it = 0; it < warmup + k; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(in, out, (int)count, MPI_INT64_T, MPI_SUM,
                          MPI_COMM_WORLD);
            if (it >= warmup)
                t += MPI_Wtime() - t0;
            int64_t tri = (int64_t)n * (n + 1) / 2;
            for (size_t i = 0; i < count; i++)
                if (out[i] != tri * (int64_t)(i + 1)) {
                    wrong++;
                    break;
                }
        }
        /* The slowest rank's time is the operation's. */
        double tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("csv,mpi,%zu,%.3f\n", size, tmax / k * 1e6);
        fflush(stdout);
        free(in);
        free(out);
    }
    free(list);
    int all;
    MPI_Allreduce(&wrong, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        fprintf(stderr, "mpi_allreduce: %d wrong results\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
