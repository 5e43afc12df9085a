import CSystem
import SuggestCore

/// Room kept on the store's disk so that a person can delete what they want gone after the disk has filled up.
///
/// SQLite writes a deletion to its log before the freed pages are overwritten, so on a full disk no deletion can
/// run, and "free some space first" is poor advice to someone deleting a conversation for privacy. The store keeps a
/// file of `size` bytes beside its database; a deletion that fails for a full disk removes it and runs again in the
/// room it gave back, and the file is made again whenever there is room (after a write-intending open, after each
/// deletion). A deletion larger than the reserve (more than a few tens of thousands of donations at once) can
/// still fail, with the same advice as before; and a snapshot of the file system (APFS's, ZFS's) may keep the
/// reserve's room after its removal.
struct DeletionReserve {
    /// The file's path: beside the database, so that it is on the same disk.
    let path: String
    /// The store's directory, whose disk is asked for room.
    let directory: String

    /// Bytes kept: the log of deleting a conversation of about 20,000 donations, with its freed pages overwritten.
    static let size = 8 << 20

    init(_ location: StoreLocation) {
        path = location.databasePath + "-reserve"
        directory = location.directory
    }

    /// Makes the file, or completes a short one, when the disk has room to spare (four times the reserve: a
    /// reserve must not be what fills a disk); otherwise leaves no partial file (it would hold room without being a
    /// reserve). Never fails: a read-only or nearly full disk just has no reserve now.
    func replenish() {
        var info = stat()
        // A link or a directory in its place is left alone (and there is no reserve): a link planted there would
        // otherwise have the store overwrite whatever file it names.
        if lstat(path, &info) == 0 {
            guard system_is_regular_file(info.st_mode) != 0, info.st_size < Self.size else { return }
        }
        var disk = statvfs()
        guard statvfs(directory, &disk) == 0,
            UInt64(disk.f_bavail) * UInt64(disk.f_frsize) >= UInt64(4 * Self.size)
        else { return }
        // Non-blocking, then checked: a FIFO put in its place would hold the open, a hard link share its bytes.
        let descriptor = system_open_creating(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        guard fstat(descriptor, &info) == 0, system_is_regular_file(info.st_mode) != 0, info.st_nlink == 1 else {
            close(descriptor)
            return
        }
        // Bytes written, not a sparse length or `posix_fallocate` (which Darwin lacks), and bytes that do not
        // compress: a file system that compresses (ZFS, btrfs) keeps zeros or a repeated pattern in no room at all.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        for index in stride(from: 0, to: chunk.count, by: 8) {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17  // xorshift64: no pattern a compressor finds
            withUnsafeBytes(of: state) { chunk.replaceSubrange(index..<(index + 8), with: $0) }
        }
        var written = 0
        var complete = true
        while written < Self.size {
            let count = chunk.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(written)) }
            guard count > 0 else {
                complete = false
                break
            }
            written += count
        }
        // No fsync: a file system takes the room of written blocks at the write (ext4's and XFS's delayed
        // allocation reserve it then), and a reserve a crash left short is completed at the next open.
        close(descriptor)
        if !complete { unlink(path) }
    }

    /// Gives the reserve's room back to the disk.
    /// - Returns: whether there was a reserve to give.
    func release() -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, system_is_regular_file(info.st_mode) != 0, info.st_size > 0 else { return false }
        return unlink(path) == 0
    }

    /// Runs a deletion; when it fails for a full disk and a reserve is there, runs it again in the reserve's room.
    /// Makes the reserve again afterwards, if there is room.
    ///
    /// A deletion that fails changes nothing (it is one transaction), so running it again is safe.
    func run<T>(_ deletion: () throws -> T) throws -> T {
        defer { replenish() }
        do {
            return try deletion()
        } catch let error as StoreError where error.kind == .diskFull && release() {
            return try deletion()
        }
    }
}
