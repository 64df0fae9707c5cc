#!/usr/bin/env bash
# Writes the seed corpus fuzz/corpus/<reader>/: small valid inputs of every reader, text ones
# written here or cut from the project's data/ and examples/, binary and HDF5 ones written by the
# kosmos tool itself. Usage: fuzz/make_corpus.sh PATH/TO/kosmos   (then commit fuzz/corpus)
set -euo pipefail
kosmos=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
c=$root/fuzz/corpus
rm -rf "$c"
mkdir -p "$c"/{rv_text,rv_csv,priors,series_text,series_symbolic,series_hdf5,nbody_text,nbody_binary,nbody_hdf5,nbody_checkpoint,posterior_text,posterior_hdf5,dust_table,dust_sizes,dust_wavelengths,dust_cells}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

head -n 25 "$root/data/rv/hd164922_radvel.txt" > "$c/rv_text/hd164922_head.txt"
printf '# t v sigma instrument\n1.5 3.2 1.0 A\n2.5 -1.0 1.1 A\n3.0 0.5 0.9 B\n4.25 2.0 1.0 B\n' > "$c/rv_text/four_rows.txt"
printf 'time,mnvel,errvel,tel\n1.5,3.2,1.0,A\n2.5,-1.0,1.1,A\n3.0,0.5,0.9,B\n4.25,2.0,1.0,B\n' > "$c/rv_csv/four_rows.csv"
printf 'P_b gauss 4.23 0.01\nK_b uniform 0 30\ne_b fixed 0\njitter_A jeffreys 0.1 10\n' > "$c/priors/priors.txt"
cp "$root/examples/series/simple.poly" "$c/series_text/simple.poly"
cp "$root/examples/series/sqrt_homotopy.poly" "$c/series_text/sqrt_homotopy.poly"
cp "$root/examples/series/cyclic5.txt" "$c/series_symbolic/cyclic5.txt"
printf 'x^2 + y^2 - (1 + 2*t);\nx*y - 0.5e-1;\n' > "$c/series_symbolic/circle.txt"
"$kosmos" series --generate p2 --degree 1 --output "$c/series_hdf5/p2.h5" >/dev/null
"$kosmos" nbody --generate 2 --bodies 3 --destination 0 --output "$work/e.txt" >/dev/null
cp "$work/e.txt" "$c/nbody_text/two_systems.txt"
"$kosmos" nbody --input "$work/e.txt" --destination 0 --output "$c/nbody_binary/two_systems.bin" >/dev/null
"$kosmos" nbody --input "$work/e.txt" --destination 0 --output "$c/nbody_hdf5/two_systems.h5" >/dev/null
# (run in the scratch folder: the checkpoint stores its settings' file names as given)
(cd "$work" && "$kosmos" nbody --input e.txt --destination 1 --checkpoint two_systems.ckpt \
  --checkpoint-interval 0.5 --output end.txt >/dev/null)
cp "$work/two_systems.ckpt" "$c/nbody_checkpoint/"
# A short posterior of the RV seed into $1 (run beside the data: a posterior records its data
# file's name as given).
posterior() {
  (cd "$c/rv_text" && "$kosmos" rv hd164922_head.txt --planets 1 --trend 0 --chains 24 --burn 4 \
    --steps 8 --thin 2 --generations 4 --candidates 64 --quiet --output "$1" >/dev/null)
}
posterior "$work/post.txt"
head -n 16 "$work/post.txt" > "$c/posterior_text/post.txt"
posterior "$c/posterior_hdf5/post.h5"
cat > "$c/dust_table/small.dat" <<'TABLE'
# a two-radius, four-wavelength table in B. T. Draine's layout
   2 1.000E-03 1.000E-02 = NRAD, a_1 (micron), a_NRAD (micron)
   4 1.000E+03 1.000E+00 = NWAV, w_1 (micron), w_NWAV (micron)

1.000E-03 = radius(micron) test grains
 w(micron)  Q_abs    Q_sca   g=<cos>
1.000E+03 2.403E-07 4.131E-21  0.00E+00
1.000E+02 2.403E-06 4.131E-17  0.00E+00
1.000E+01 2.403E-05 4.131E-13  0.00E+00
1.000E+00 2.403E-03 4.131E-09  0.00E+00

1.000E-02 = radius(micron) test grains
 w(micron)  Q_abs    Q_sca   g=<cos>
1.000E+03 2.403E-06 4.131E-18  0.00E+00
1.000E+02 2.403E-05 4.131E-14  0.00E+00
1.000E+01 2.403E-04 4.131E-10  0.00E+00
1.000E+00 2.403E-02 4.131E-06  0.00E+00
TABLE
printf '0.001 1e20\n0.01 1e17\n0.1 1e14\n' > "$c/dust_sizes/three.txt"
printf '0.1\n1\n10\n100\n' > "$c/dust_wavelengths/four.txt"
printf '0.1 0.02\n1 0.2\n10 2\n100 20\n' > "$c/dust_wavelengths/four_widths.txt"
printf '1e28 1e-3 2e-3 1e-4 1e-6\n2e27 1e-2 2e-2 1e-3 1e-5\n' > "$c/dust_cells/two.txt"
# Each HDF5 seed again in HDF5's default format without metadata checksums (what h5py and most
# tools write): the tool's own files are checksummed, and such inputs take another path (a child
# process copies them first, core/hdf5.cpp). Needs h5py (Debian's python3-h5py) in $PYTHON (python3).
"${PYTHON:-python3}" - "$c" <<'COPY'
import glob, sys
import h5py
for path in sorted(glob.glob(sys.argv[1] + "/*_hdf5/*.h5")):
    with h5py.File(path, "r") as source, h5py.File(path[:-3] + "_earliest.h5", "w", libver="earliest") as copy:
        for key, value in source.attrs.items():
            copy.attrs[key] = value
        for name in source:
            source.copy(source[name], copy, name=name)
COPY
for d in "$c"/*/; do echo "$(basename "$d"): $(ls "$d" | wc -l) file(s)"; done
