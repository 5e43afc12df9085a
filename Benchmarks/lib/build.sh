# Shared by the scripts that compare this tree with an earlier revision: source it, then
#   build_tree TREE OUT        builds suggest and suggest-bench of TREE in release, installs them in OUT
#   add_base_tree REVISION DIR checks REVISION out in a temporary worktree at DIR (remove_base_tree DIR removes it)
#   build_new_and_base REVISION WORK   both of the above for this tree and REVISION, cleaned up on exit; sets NEW
#                                      and OLD (the two builds' `suggest`) and BENCH (this tree's `suggest-bench`)

# The build users make: `swift build -c release` (older trees needed the static flags spelled out; both give one
# static executable here).
build_tree() {
    local tree=$1 out=$2
    (cd "$tree" && swift build -c release --static-swift-stdlib -Xswiftc -static-executable --product suggest >&2 &&
        swift build -c release --static-swift-stdlib -Xswiftc -static-executable --product suggest-bench >&2)
    local bin
    bin=$(cd "$tree" && swift build -c release --static-swift-stdlib -Xswiftc -static-executable --show-bin-path)
    install -D -m 755 "$bin/suggest" "$out/suggest"
    install -D -m 755 "$bin/suggest-bench" "$out/suggest-bench"
}

add_base_tree() {
    git worktree add --force --detach "$2" "$1" >/dev/null 2>&1
}

remove_base_tree() {
    if [ -d "$1" ]; then git worktree remove --force "$1" >/dev/null 2>&1 || true; fi
}

# Builds this tree into WORK/new and REVISION into WORK/old (from a worktree at WORK/base-tree); on exit the worktree
# goes, and WORK too unless KEEP=1.
build_new_and_base() {
    BUILD_WORK=$2
    mkdir -p "$BUILD_WORK"
    trap remove_builds EXIT
    printf '%s\n' "building this tree" >&2
    build_tree . "$BUILD_WORK/new"
    printf '%s\n' "building $1" >&2
    add_base_tree "$1" "$BUILD_WORK/base-tree"
    build_tree "$BUILD_WORK/base-tree" "$BUILD_WORK/old"
    NEW=$BUILD_WORK/new/suggest
    OLD=$BUILD_WORK/old/suggest
    BENCH=$BUILD_WORK/new/suggest-bench
}

# The exit trap of build_new_and_base: it reads the directory from a variable, so that no path is ever parsed as
# shell (a quote in SUGGEST_BENCH_DIR broke the trap, and left the worktree registered).
remove_builds() {
    remove_base_tree "$BUILD_WORK/base-tree"
    if [ "${KEEP:-0}" != 1 ]; then rm -rf "$BUILD_WORK"; fi
}
