"""The plots of ``kosmos rv --plot DIR`` and ``kosmos dust --plot DIR``, made from the files the
tool wrote (the tool runs ``python3 -m kosmos.cli_plots ...`` after writing its outputs).

    python3 -m kosmos.cli_plots rv --data RV_FILE --posterior POSTERIOR --output DIR
    python3 -m kosmos.cli_plots dust [--sed F] [--temperatures F] [--pt F.h5] --output DIR

Each writes PNG files into DIR (created if missing) and prints their names.
"""
import argparse
import os
import sys

import numpy as np

from . import _kosmos, io, kepler, plot


def rv_plots(data_path, posterior_path, directory, *, dpi=100):
    fit = kepler.read_posterior(posterior_path, data_path)
    written = []
    for name in ("rv", "phase", "periodogram", "corner", "trace"):
        if name == "phase" and fit.planets == 0:
            continue
        path = os.path.join(directory, f"{name}.png")
        getattr(plot, name)(fit, path=path, dpi=dpi)
        written.append(path)
    return written


def _cells_shown(n, most=6):
    """Up to `most` cells spread over the file (the first and the last among them)."""
    return np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int))


def _dust_table(path, dataset):
    """(values, comments) of a text output, or of an HDF5 output's dataset."""
    if io.is_hdf5(path):
        return io.read(path, dataset), []
    comments, _, values = io.read_text_table(path)
    return values, comments


def _header_values(comments, key):
    for c in comments:
        if c.startswith(key + " "):
            return c.split()[1:]
    raise _kosmos.FileError(f"no '# {key} ...' header line")


def dust_plots(directory, *, sed=None, temperatures=None, pt=None, dpi=100):
    written = []
    if sed:
        values, comments = _dust_table(sed, "sed")
        lam = io.read(sed, "wavelength_micron") if io.is_hdf5(sed) else \
            np.array([float(x) for x in _header_values(comments, "lambda_micron")])
        cells = _cells_shown(len(values))
        path = os.path.join(directory, "sed.png")
        plot.sed(lam, values[cells], path, dpi=dpi, labels=[f"cell {c}" for c in cells])
        written.append(path)
    if temperatures:
        values, comments = _dust_table(temperatures, "temperature")
        if io.is_hdf5(temperatures):
            radius = io.read(temperatures, "radius_micron")
            composition = io.read(temperatures, "composition").astype(int)
        else:
            pairs = [x.split(":") for x in _header_values(comments, "composition:radius_micron")]
            composition = np.array([int(c) for c, _ in pairs])
            radius = np.array([float(r) for _, r in pairs])
        cells = _cells_shown(len(values), 4)
        for k in np.unique(composition):
            path = os.path.join(directory, f"temperatures_{k}.png")
            plot.temperatures(radius[composition == k], values[cells][:, composition == k], path,
                              dpi=dpi, labels=[f"cell {c}" for c in cells])
            written.append(path)
    if pt:
        probability = io.read(pt, "probability")
        bin_temperature = io.read(pt, "bin_temperature")
        species = io.read(pt, "stochastic_species").astype(int)
        shown = np.unique(np.linspace(0, len(species) - 1, min(len(species), 6)).round().astype(int))
        path = os.path.join(directory, "temperature_distribution.png")
        bins = io.read(pt, "species_bins")[shown] if io.has(pt, "species_bins") else None
        plot.temperature_distribution(bin_temperature[0, shown], probability[0, shown], path,
                                      dpi=dpi, labels=[f"species {species[g]}" for g in shown],
                                      bins=bins)
        written.append(path)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m kosmos.cli_plots", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rv = sub.add_parser("rv")
    rv.add_argument("--data", required=True)
    rv.add_argument("--posterior", required=True)
    dust = sub.add_parser("dust")
    dust.add_argument("--sed")
    dust.add_argument("--temperatures")
    dust.add_argument("--pt")
    for p in (rv, dust):
        p.add_argument("--output", required=True)
        p.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args(argv)
    os.makedirs(args.output, exist_ok=True)
    if args.command == "rv":
        written = rv_plots(args.data, args.posterior, args.output, dpi=args.dpi)
    else:
        written = dust_plots(args.output, sed=args.sed, temperatures=args.temperatures, pt=args.pt,
                             dpi=args.dpi)
        if not written:
            parser.error("dust: nothing to plot (give --sed, --temperatures or --pt)")
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
