#!/usr/bin/env python3
"""Function totals of a sampling_profiler.c profile.

    symbolize_profile.py PROFILE [BINARY_DIR...] [--top N] [--callers TEXT]

Addresses in files found here (the profiled binary and libraries carried from this machine,
looked up by file name under BINARY_DIRs) are named with addr2line; the others (the GPU machine's
own libraries: CUDA driver, libc, libgomp) by their file. Prints three tables: self (the
interrupted function), self attributed to the innermost named caller (where a wait in the CUDA
driver or libgomp comes from), and inclusive (every function on the stack, once per sample).
--callers TEXT adds a fourth: for the samples with a function whose name holds TEXT on the stack,
the chain of named functions that called its innermost such frame (up to four), per chain.
"""
import argparse
import collections
import os
import subprocess


def read_profile(path):
    stacks, maps, in_maps = [], [], False
    with open(path) as f:
        for line in f:
            if line.startswith("# maps"):
                in_maps = True
            elif line.startswith("#"):
                continue
            elif in_maps:
                fields = line.split()
                if len(fields) >= 6 and "x" in fields[1]:
                    lo, hi = (int(v, 16) for v in fields[0].split("-"))
                    maps.append((lo, hi, int(fields[2], 16), fields[5]))
            else:
                fields = line.split()
                stacks.append((int(fields[0]), [int(a, 16) for a in fields[1:]]))
    return stacks, maps


def find_local(name, dirs):
    base = os.path.basename(name)
    for d in dirs:
        for root, _, files in os.walk(d):
            if base in files:
                return os.path.join(root, base)
    return None


def load_segments(path):
    """(file offset, virtual address, size) of each loadable segment of an ELF file."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    return [(int(f[1], 16), int(f[2], 16), int(f[4], 16))
            for f in (line.split() for line in out.splitlines()) if f and f[0] == "LOAD"]


def file_to_virtual(offset, segments):
    for file_offset, virtual, size in segments:
        if file_offset <= offset < file_offset + size:
            return offset - file_offset + virtual
    return offset


def symbolizer(stacks, maps, dirs):
    """address -> (name, known): known when the address lies in a file found here."""
    per_file = collections.defaultdict(set)
    where = {}
    for _, frames in stacks:
        for k, address in enumerate(frames):
            if address in where:
                continue
            # A return address points after its call: look up the call itself.
            lookup = address if k == 0 else address - 1
            for lo, hi, offset, name in maps:
                if lo <= lookup < hi:
                    where[address] = (name, lookup - lo + offset)
                    per_file[name].add(where[address][1])
                    break
            else:
                where[address] = (None, 0)
    names = {}
    for name, offsets in per_file.items():
        local = find_local(name, dirs)
        if not local:
            continue
        segments = load_segments(local)
        offsets = sorted(offsets)
        out = subprocess.run(["addr2line", "-f", "-C", "-e", local] +
                             [hex(file_to_virtual(o, segments)) for o in offsets],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        for o, function in zip(offsets, out[0::2]):
            names[(name, o)] = function[:150] + "  [" + os.path.basename(name) + "]"
    result = {}
    for address, (name, offset) in where.items():
        if name is None:
            result[address] = ("[unmapped]", False)
        elif (name, offset) in names:
            result[address] = (names[(name, offset)], True)
        else:
            result[address] = ("[" + os.path.basename(name) + "]", False)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("profile")
    parser.add_argument("dirs", nargs="*")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--callers", default="")
    args = parser.parse_args()
    stacks, maps = read_profile(args.profile)
    name = symbolizer(stacks, maps, args.dirs)
    total = sum(ms for ms, _ in stacks)
    self_time, attributed, inclusive, callers = (collections.Counter() for _ in range(4))
    for ms, frames in stacks:
        if args.callers:
            hit = next((k for k, a in enumerate(frames) if args.callers in name[a][0]), None)
            if hit is not None:
                chain = [name[a][0][:90] for a in frames[hit + 1:] if name[a][1]][:4]
                callers[" <- ".join(chain)] += ms
        leaf, known = name[frames[0]]
        self_time[leaf] += ms
        if not known:
            caller = next((name[a][0] for a in frames[1:] if name[a][1]), "?")
            attributed[leaf + " <- " + caller] += ms
        else:
            attributed[leaf] += ms
        for function in {name[a][0] for a in frames}:
            inclusive[function] += ms
    print(f"{total} ms sampled ({len(stacks)} samples)")
    tables = [("self", self_time), ("self, by innermost named caller", attributed),
              ("inclusive", inclusive)]
    if args.callers:
        tables.append(("callers of " + args.callers, callers))
    for title, table in tables:
        print(f"\n## {title}")
        for function, ms in table.most_common(args.top):
            print(f"{100 * ms / total:6.2f}%  {ms / 1000:8.3f} s  {function}")


if __name__ == "__main__":
    main()
