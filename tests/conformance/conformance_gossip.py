# SPDX-License-Identifier: BSD-3-Clause
"""The gossip family's cases of the conformance suite (conformance.py
calls gossip_cases): push-flow and push-cancel-flow averages over real
processes, with the family's messages lost at a seeded rate
(ftcoll-bench --loss, bench/bench_loss.c) and one rank killing itself
with SIGKILL as a seeded iteration starts (--kill). Not from outside at
a random point: a rank waiting at a hold still answers late neighbours
of its lingering gossip operations, so a signal there lands inside a
send, which wedges the shared-memory transports (KILL_MID_SEND_WEDGES).

Per job:

  - the common checks (Suite.check): every survivor ends every
    operation, no wrong result by ftcoll-bench's own check (before the
    kill: everyone's exact average to the tolerance), nobody else
    declared failed, and the kill happened (SIGKILL, no summary, every
    survivor names the victim failed);
  - the loss happened: the survivors dropped messages;
  - after the kill: from the first operation that every survivor started
    with the victim already known failed, every converged FTC_OK result
    is the survivors' exact average to the family's tolerance, 4 n times
    the target 1e-14 (docs/gossip.md, "Node failure": nobody exchanged
    anything with the victim, so push-flow and PCF alike owe exactly
    that), and at least one such operation was checked at every survivor
    (the check cannot pass vacuously). Results delivered at the
    iteration cap, or not FTC_OK, are counted and printed: the report
    qualifies them, the tolerance does not.
"""

TARGET = 1e-14


def check_gossip_after_kill(suite, job, n, victims):
    problems = []
    survivors = [r for r in range(n) if r not in victims
                 and r in job.summary]
    dropped = sum(job.summary[r].get("loss_dropped", 0) for r in survivors)
    if dropped == 0:
        problems.append("no message was lost: the loss did not happen")
    views = {r: job.summary[r].get("gossip_survivors") for r in survivors}
    if not views:
        problems.append("no survivor printed a summary")
        return problems, dropped, 0, 0
    if any(v is None or v.get("known_from") is None
           for v in views.values()):
        missing = [r for r, v in views.items()
                   if v is None or v.get("known_from") is None]
        problems.append("rank(s) %s never started an operation knowing the "
                        "victim failed" % ",".join(map(str, missing)))
        return problems, dropped, 0, 0
    start = max(v["known_from"] for v in views.values())
    tol = 4 * n * TARGET
    checked = {}
    skipped = 0
    for r, v in views.items():
        checked[r] = 0
        for k, e in enumerate(v["err"]):
            g = v["from"] + k
            if g < start:
                continue
            if e is None:
                skipped += 1
                continue
            checked[r] += 1
            if e > tol:
                problems.append("rank %d, operation %d (every survivor knew "
                                "of the kill): error %.3g against the "
                                "survivors' average, above %.3g"
                                % (r, g, e, tol))
    lazy = [r for r, c in checked.items() if c == 0]
    if lazy:
        problems.append("rank(s) %s: no converged result after every "
                        "survivor knew of the kill (nothing checked)"
                        % ",".join(map(str, lazy)))
    return problems, dropped, min(checked.values()), skipped


def gossip_cases(suite, iters=60):
    for algo in ("push-flow", "pcf"):
        n, loss = 6, 0.05
        v = suite.rng.randint(0, n - 1)
        seed = suite.rng.randint(1, 1 << 30)

        g = suite.rng.randint(5, iters // 2)
        name = ("gossip %s n=%d loss=%.2f victim=%d killed at %d"
                % (algo, n, loss, v, g))

        def fn(algo=algo, n=n, iters=iters, loss=loss, v=v, seed=seed, g=g):
            args = ["--coll", "allreduce", "--algo", algo,
                    "--gossip-period-us", 100, "--loss", loss,
                    "--loss-seed", seed, "--iters", iters, "--warmup", 0,
                    "--sizes", 8, "--quiet", "--kill", "%d@%d" % (v, g)]
            # Push-flow converges slowly where exchanges cross (links
            # slower than the period, as a loaded host makes them): more
            # than the default minute for 60 operations at load 30.
            job = suite.run(n, args, ["--may-fail", str(v)], timeout=180)
            problems = suite.check(job, n, "allreduce", kills=[v], ops=iters,
                                   agree=False)
            more, dropped, least, skipped = check_gossip_after_kill(
                suite, job, n, [v])
            suite.info = ("%d messages lost, >= %d results checked per "
                          "survivor, %d at the cap or not FTC_OK"
                          % (dropped, least, skipped))
            return problems + more, job
        suite.case(name, fn)
