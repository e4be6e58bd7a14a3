# SPDX-License-Identifier: BSD-3-Clause
# The picture of bench/gossip_to_target.sh's data (docs/gossip.md,
# "Iterations to 1e-15 versus n"):
#   gnuplot -e "dir='build-rel/gossip-figures'; docs='docs'" bench/gossip_to_target.gp
if (!exists("dir")) dir = 'build-rel/gossip-figures'
if (!exists("docs")) docs = 'docs'
set terminal svg size 760,520 font 'Helvetica,12' dynamic background rgb 'white'
set output docs.'/gossip-to-target.svg'
set grid lc rgb "#dddddd"
set key top left font ",10"
set logscale x 2
set logscale y 10
set xlabel "n (processes)"
set ylabel "iterations of the slowest process (median over the seeds)"
set title "Iterations to a 1e-15 local test versus n (PCF; push-flow to its rounding floor)"

# The median over the seeds of (algo, shape, op) per n, sorted by n, with
# the torus's longest side: "n iterations longest_side". The median, not
# the mean: one seed held for thousands of iterations (as a PCF sum's
# root was before its running sum was kept exactly; docs/gossip.md,
# "Iterations to 1e-15 versus n") would otherwise hide the others.
rows(a, s, o) = sprintf("< awk '$1 == \"%s\" && $2 == \"%s\" && $4 == \"%s\" { split($3, d, \"x\"); v[$5, ++k[$5]] = $7; side[$5] = d[3] + 0 } END { for (n in k) { c = k[n]; for (i = 1; i <= c; i++) a[i] = v[n, i]; for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } m = c %% 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2; print n, m, side[n] } }' %s/to-target.dat | sort -g -k1,1", a, s, o, dir)
# The 3D torus mixes in O(L^2) iterations, L its longest side (its
# spectral gap is 1 - cos(2 pi / L) over 3); the local test adds a window
# and echo waits that do not grow with L: a + b L^2, fitted to PCF's
# average.
set fit quiet
set fit logfile '/dev/null'
fa = 100; fb = 5
f(L) = fa + fb * L * L
fit f(x) rows("pcf", "torus3d", "avg") u 3:2 via fa, fb
plot rows("pcf", "hypercube", "avg") u 1:2 w lp lw 2 pt 7 t "PCF hypercube avg", \
     rows("pcf", "hypercube", "sum") u 1:2 w lp lw 2 pt 5 t "PCF hypercube sum", \
     rows("pcf", "torus3d", "avg") u 1:2 w lp lw 2 pt 7 t "PCF 3D torus avg", \
     rows("pcf", "torus3d", "sum") u 1:2 w lp lw 2 pt 5 t "PCF 3D torus sum", \
     rows("push-flow", "torus3d", "avg") u 1:2 w lp lw 2 dt 2 pt 6 t "push-flow 3D torus avg (at its floor)", \
     rows("push-flow", "torus3d", "sum") u 1:2 w lp lw 2 dt 2 pt 4 t "push-flow 3D torus sum (at its floor)", \
     rows("pcf", "torus3d", "avg") u 1:(f($3)) w lp lw 1 dt 3 pt 1 lc rgb "#777777" \
         t sprintf("%.0f + %.2f L², L the torus's longest side", fa, fb) noenhanced
