#!/usr/bin/env bash
# Builds PHCpack's `phc` executable (the oracle of perf_tests/series/compare_phcpack.py) from its
# sources, outside the clone, and prints the path of the binary.
#
#   scripts/phcpack.sh            build phc once (cached) and print its path
#   scripts/phcpack.sh system     install the Debian packages the build needs (gnat, gprbuild;
#                                 needs root)
#
# Environment:
#   PHCPACK_SOURCE   a git URL, a git directory (bare or not) or an unpacked source tree
#                    (default https://github.com/janverschelde/PHCpack). A git directory may be
#                    an incomplete snapshot (a mirror whose demo files lack their blobs): only
#                    the files the build reads are exported, blob by blob, and a missing one
#                    among them is named in the error.
#   PHCPACK_COMMIT   the commit to build from a git source (default HEAD)
#   KOSMOS_CACHE     the cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/kosmos); the build
#                    lands in $KOSMOS_CACHE/phcpack/<commit>/
#   KOSMOS_JOBS      parallel compilations (default nproc)
#
# The build is PHCpack's own project main.gpr (its Alire crate: Ada and C, main phctop.adb ->
# phc, -O3 -gnatp) with gprbuild, configured for Linux instead of the crate's default Windows.
# The binary links libgcc and the GNAT runtime statically (gnatbind -static: a project with C
# sources otherwise links Debian's libgnat-12.so and libgnarl-12.so), so it can be carried to
# another x86-64 Linux machine without GNAT; it needs only the C library.
set -euo pipefail

cache=${KOSMOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kosmos}
jobs=${KOSMOS_JOBS:-$(nproc)}
source=${PHCPACK_SOURCE:-https://github.com/janverschelde/PHCpack}
commit=${PHCPACK_COMMIT:-HEAD}

log() { printf '[kosmos phcpack] %s\n' "$*" >&2; }
die() {
    printf '[kosmos phcpack] error: %s\n' "$*" >&2
    exit 1
}

if [[ ${1:-} == system ]]; then
    apt-get install -y --no-install-recommends gnat gprbuild
    exit 0
fi
[[ $# -eq 0 ]] || die "unknown argument '$1' (expected none or 'system')"
command -v gprbuild >/dev/null || die "gprbuild not found: run '$0 system' (Debian gnat, gprbuild)"

# The parts of the source tree the build reads (the rest holds large demos and documentation).
parts=(main.gpr config src/Ada src/Feedback)

# Writes the files of $parts at commit $2 of git directory $1 into folder $3. Blob by blob rather
# than `git archive`, which indexes the whole tree and so trips over blobs missing elsewhere (in a
# partial snapshot); a blob missing among the parts is an error naming its path.
export_parts() {
    local gitdir=$1 id=$2 dest=$3 listing=$work/listing missing
    git --git-dir="$gitdir" ls-tree -r --full-tree "$id" -- "${parts[@]}" >"$listing"
    [[ -s $listing ]] || die "commit $id has none of: ${parts[*]}"
    missing=$(awk -F '\t' '{ split($1, m, " "); if (m[2] == "blob") print m[3] }' "$listing" |
        git --git-dir="$gitdir" cat-file --batch-check |
        paste -d ' ' - <(awk -F '\t' '{ split($1, m, " "); if (m[2] == "blob") print $2 }' "$listing") |
        awk '$2 == "missing" { $1 = $2 = ""; print substr($0, 3) }' | tr '\n' ' ')
    [[ -z $missing ]] || die "the git directory $gitdir lacks the blobs of: $missing"
    local mode type object path
    while IFS=$'\t' read -r meta path; do
        read -r mode type object <<<"$meta"
        [[ $type == blob ]] || continue
        mkdir -p "$dest/$(dirname "$path")"
        if [[ $mode == 120000 ]]; then
            ln -s "$(git --git-dir="$gitdir" cat-file blob "$object")" "$dest/$path"
        else
            git --git-dir="$gitdir" cat-file blob "$object" >"$dest/$path"
            if [[ $mode == 100755 ]]; then chmod +x "$dest/$path"; fi
        fi
    done <"$listing"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -d $source && ! -d $source/.git && ! -f $source/HEAD ]]; then
    id=tree-$(cd "$source" && find "${parts[@]}" -type f | sort | xargs cat | sha256sum | cut -c1-16)
    tree=$source
else
    if [[ -d $source ]]; then
        gitdir=$source
        [[ -d $source/.git ]] && gitdir=$source/.git
    else
        gitdir=$work/repo.git
        log "cloning $source"
        git clone --quiet --bare --filter=blob:none "$source" "$gitdir"
    fi
    id=$(git --git-dir="$gitdir" rev-parse "$commit^{commit}")
fi

prefix=$cache/phcpack/$id
phc=$prefix/bin/phc
if [[ -x $phc ]]; then
    if ldd "$phc" 2>/dev/null | grep -q libgnat; then
        log "$phc links the GNAT runtime dynamically (built before gnatbind -static);" \
            "carry libgnat and libgnarl along, or delete $prefix to rebuild"
    fi
    echo "$phc"
    exit 0
fi

# An interrupted build resumes: the sources are copied once (stamp), gprbuild skips what it built.
build=$prefix/build
if [[ ! -f $build/.sources-copied ]]; then
    rm -rf "$build"
    mkdir -p "$build"
    if [[ -n ${gitdir:-} ]]; then
        export_parts "$gitdir" "$id" "$build"
    else
        for part in "${parts[@]}"; do
            mkdir -p "$build/$(dirname "$part")"
            cp -r "$tree/$part" "$build/$part"
        done
    fi
    # The crate's configuration names Windows; the Linux sources (Unix timer) instead.
    sed -i 's/^ *Alire_Host_OS := "windows";/   Alire_Host_OS := "linux";/' \
        "$build/config/phcpack_config.gpr"
    grep -q 'Alire_Host_OS := "linux";' "$build/config/phcpack_config.gpr" ||
        die "config/phcpack_config.gpr has no Alire_Host_OS line to set to linux"
    touch "$build/.sources-copied"
fi

log "building phc in $build (log: $prefix/build.log); this takes a while"
(cd "$build" && gprbuild -p -j"$jobs" -P main.gpr -bargs -static) >>"$prefix/build.log" 2>&1 ||
    die "the build failed; see $prefix/build.log"

mkdir -p "$prefix/bin"
cp "$build/bin/phc" "$phc"
rm -rf "$build"
log "built $phc"
echo "$phc"
