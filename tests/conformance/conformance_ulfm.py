# SPDX-License-Identifier: BSD-3-Clause
"""The failure-mitigation cases of the conformance suite (conformance.py
calls ulfm_cases): agreement and shrink (ftcoll-bench --coll agree|shrink,
bench/bench_ulfm.c) over real processes with real SIGKILLs, and an
invalidation by one rank that must reach all.

Every fault is tied to progress: a rank kills itself as an iteration
starts (--kill), right after its K-th send inside an agreement or a
shrink (--crash-sends R@G:K[:shrink], or as that operation delivers if it
sends fewer), or ftcoll-run kills it on a cue and it holds until the
signal lands. Each rank checks its own results (bench_ulfm.c); here the
properties that need every rank's view (docs/ulfm.md):

  - termination: every survivor delivered every iteration's agreement;
  - uniform agreement: every survivor has the same status, value and
    failed set at each iteration, the same shrunk groups (iteration, id,
    epoch, members) and the same values of the allreduces on them;
  - validity: every survivor's bit is cleared (it contributed) in every
    agreement; a victim's bit is set and the victim is in the failed set
    from the iteration after its death (or its death's own, for --kill),
    while it is a member; the last group holds no victim (shrink);
  - invalidation: every survivor saw the invalidated group invalidated,
    and the agreement that followed told every rank to shrink;
  - the faults happened (Suite.landed: the kill event, death by SIGKILL).
"""


def _ulfm_lines(job):
    """rank -> the "ulfm" object of the rank's line."""
    return {d["rank"]: d["ulfm"] for d in job.other if "ulfm" in d}


def check_ulfm(suite, job, n, iters, kills=(), deaths=None, shrink=False,
               invalidated=None):
    """deaths: victim -> first iteration it cannot have contributed to.
    invalidated: the iteration at which a rank invalidated the group."""
    problems = suite.check(job, n, "shrink" if shrink else "agree",
                           kills=kills)
    survivors = [r for r in range(n) if r not in kills]
    lines = _ulfm_lines(job)
    missing = [r for r in survivors if r not in lines]
    if missing:
        problems.append("rank(s) %s printed no ulfm results" % missing)
        return problems
    first = lines[survivors[0]]
    for r in survivors:
        u = lines[r]
        if len(u["results"]) != iters:
            problems.append("rank %d delivered %d of %d agreements "
                            "(termination)" % (r, len(u["results"]), iters))
        for key, what in (("results", "agreement results"),
                          ("shrinks", "shrunk groups"),
                          ("allreduces", "allreduces on the new groups")):
            mine = [x[:4] if key == "shrinks" else x for x in u[key]]
            theirs = [x[:4] if key == "shrinks" else x for x in first[key]]
            if mine != theirs:
                at = next((a[0] for a, b in zip(mine, theirs) if a != b),
                          None)
                problems.append("ranks %d and %d differ in their %s (first "
                                "at iteration %s): uniform agreement"
                                % (survivors[0], r, what, at))
                break
    # Validity, seen from all ranks (the value is the same everywhere).
    members = set(range(n))
    shrinks = {s[0]: s for s in first["shrinks"]}
    for g, status, value, failed in first["results"]:
        v = int(value, 16)
        if status != "FTC_OK":
            problems.append("iteration %d: agreement ended with %s"
                            % (g, status))
            continue
        for r in survivors:
            if (v >> r) & 1:
                problems.append("iteration %d: survivor %d's contribution "
                                "is missing" % (g, r))
        for vict, k in (deaths or {}).items():
            if g >= k and vict in members and (
                    not (v >> vict) & 1 or vict not in failed):
                problems.append("iteration %d: rank %d, dead since %d, is "
                                "%s" % (g, vict, k, "a contributor"
                                        if not (v >> vict) & 1 else
                                        "not in the failed set"))
        if invalidated is not None and g == invalidated and (v >> 63) & 1:
            problems.append("iteration %d: the invalidating rank's cleared "
                            "bit 63 is not in the value" % g)
        if g in shrinks:
            members = set(shrinks[g][3])
    if shrink:
        for vict in kills:
            if vict in members:
                problems.append("the last group %s still holds victim %d"
                                % (sorted(members), vict))
        if kills and not first["shrinks"]:
            problems.append("nobody shrank")
    if invalidated is not None:
        for r in survivors:
            seen = {(i, e): inv for i, e, inv in lines[r]["groups"]}
            if not seen.get((1, 0)):
                problems.append("rank %d never saw group (1, 0) invalidated"
                                % r)
        if not any(s[0] == invalidated for s in first["shrinks"]):
            problems.append("no shrink at iteration %d after the "
                            "invalidation" % invalidated)
    return problems


def ulfm_cases(suite):
    rng = suite.rng

    def run_case(name, n, iters, extra, kills=(), deaths=None, shrink=False,
                 invalidated=None, run_args=()):
        def fn():
            args = ["--coll", "shrink" if shrink else "agree",
                    "--iters", iters, "--warmup", 0, "--quiet"] + extra
            ra = list(run_args)
            if kills:
                ra += ["--may-fail", ",".join(map(str, sorted(kills)))]
            job = suite.run(n, args, ra)
            return check_ulfm(suite, job, n, iters, kills, deaths, shrink,
                              invalidated), job
        suite.case(name, fn)

    for n in (2, 5, 8, 16):
        run_case("ulfm: agree fault-free n=%d" % n, n, 20, [])

    # Crashes inside the agreement, at a send count; rank 0 (the first
    # ballot's coordinator) among the victims half the time.
    for n, k in ((4, 1), (6, 2), (8, 2), (16, 3)):
        victims = rng.sample(range(n), k)
        if rng.random() < 0.5 and 0 not in victims:
            victims[0] = 0
        iters, plan, deaths, where = 20, [], {}, []
        for v in victims:
            g, s = rng.randint(1, iters - 3), rng.randint(1, 4)
            plan += ["--crash-sends", "%d@%d:%d" % (v, g, s)]
            deaths[v] = g + 1
            where.append("%d@%d:%d" % (v, g, s))
        run_case("ulfm: agree crash-during n=%d %s" % (n, " ".join(where)),
                 n, iters, plan, victims, deaths)

    # Kills as an iteration starts (the agreement must find the death).
    for n in (5, 8):
        v, g = rng.randrange(n), rng.randint(1, 15)
        run_case("ulfm: agree kill-before n=%d %d@%d" % (n, v, g), n, 20,
                 ["--kill", "%d@%d" % (v, g)], [v], {v: g})

    # From outside, wherever ftcoll-run's signal finds the victim.
    for n in (6, 8):
        v = rng.randrange(n)
        bench, run_args, g, h = suite.outside(v, 30)
        run_case("ulfm: agree kill-from-outside n=%d %d@%d..%d"
                 % (n, v, g, h), n, 30, bench, [v], {v: h},
                 run_args=run_args)

    # Shrink: a death found by the agreement, then every survivor shrinks
    # and runs an allreduce on the new group; a second victim crashes
    # inside that shrink.
    for n in (5, 8, 16):
        a, b = rng.sample(range(n), 2)
        g, s = rng.randint(1, 8), rng.randint(1, 4)
        run_case("ulfm: shrink kill %d@%d, crash %d in the shrink after %d "
                 "sends, n=%d" % (a, g, b, s, n), n, 12,
                 ["--kill", "%d@%d" % (a, g),
                  "--crash-sends", "%d@%d:%d:shrink" % (b, g, s)],
                 [a, b], {a: g, b: g + 1}, shrink=True)
    for n in (4, 8):
        v, g, s = rng.randrange(n), rng.randint(1, 8), rng.randint(1, 3)
        run_case("ulfm: shrink crash %d@%d in the agreement after %d sends,"
                 " n=%d" % (v, g, s, n), n, 12,
                 ["--crash-sends", "%d@%d:%d" % (v, g, s)], [v],
                 {v: g + 1}, shrink=True)

    # Invalidation by one rank reaches all; the agreement then decides a
    # shrink everywhere; once with a death in the same iteration.
    for n in (3, 8, 16):
        r, g = rng.randrange(n), rng.randint(1, 6)
        run_case("ulfm: invalidate by rank %d at %d reaches all n=%d"
                 % (r, g, n), n, 10, ["--invalidate", "%d@%d" % (r, g)],
                 invalidated=g, shrink=True)
    n = 8
    r, v = rng.sample(range(n), 2)
    g = rng.randint(1, 6)
    run_case("ulfm: invalidate by rank %d and kill %d at %d n=%d"
             % (r, v, g, n), n, 10,
             ["--invalidate", "%d@%d" % (r, g), "--kill", "%d@%d" % (v, g)],
             [v], {v: g}, shrink=True, invalidated=g)

    uniform_allreduce_cases(suite)


def uniform_allreduce_cases(suite):
    """The corrected allreduce in uniform mode (ftcoll-bench --uniform,
    docs/ulfm.md "Uniform allreduce") with a SIGKILL from outside,
    wherever it finds the victim in its stream; the victim is rank 0, the
    first root, half the time, so that a root may die mid-broadcast. Every
    survivor completes every iteration, each one the same way at all of
    them (FTC_OK with one value, or FTC_EPROC_FAILED everywhere): equal
    digests (Suite.check), and every survivor ran the mode."""
    rng, iters = suite.rng, 30
    for n in (4, 8):
        v = 0 if rng.random() < 0.5 else rng.randrange(1, n)
        bench, run_args, g, h = suite.outside(v, iters)

        def fn(n=n, v=v, bench=bench, run_args=run_args):
            args = ["--coll", "allreduce", "--uniform", "-f", 1,
                    "--iters", iters, "--warmup", 0, "--quiet"] + bench
            job = suite.run(n, args, run_args)
            problems = suite.check(job, n, "allreduce", kills=[v],
                                   ops=iters)
            plain = [r for r, s in job.summary.items()
                     if not s.get("uniform")]
            if plain:
                problems.append("rank(s) %s did not run in uniform mode"
                                % sorted(plain))
            failed = max((s["statuses"].get("FTC_EPROC_FAILED", 0)
                          for s in job.summary.values()), default=0)
            suite.info = "%d iteration(s) FTC_EPROC_FAILED" % failed
            return problems, job
        suite.case("ulfm: uniform allreduce kill-from-outside n=%d %d@%d..%d"
                   % (n, v, g, h), fn)
