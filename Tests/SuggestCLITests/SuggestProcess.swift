#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `suggest` binary as a separate process, as a user or a script would.
struct SuggestProcess {
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// The `suggest` binary beside the test bundle (`.build/<configuration>/suggest`).
    static var binary: String {
        let runner = CommandLine.arguments.first ?? ""
        var directory = runner
        if let slash = directory.lastIndex(of: "/") { directory = String(directory[..<slash]) }
        // The test bundle may be a directory (`suggestPackageTests.xctest/...`) on some platforms.
        while !directory.isEmpty, access(directory + "/suggest", X_OK) != 0, let slash = directory.lastIndex(of: "/") {
            directory = String(directory[..<slash])
        }
        return directory + "/suggest"
    }

    /// Runs `suggest ARGUMENTS` with `input` on standard input and the given extra environment.
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:]) -> Result {
        let scratch = TemporaryDirectory()
        let inputPath = scratch.path + "/stdin"
        let outputPath = scratch.path + "/stdout"
        let errorPath = scratch.path + "/stderr"
        write(input, to: inputPath)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ["PATH=/usr/bin:/bin", "HOME=" + scratch.path]
        for (key, value) in environment { env.append(key + "=" + value) }
        let argv = [binary] + arguments
        var pid: pid_t = 0
        let argvPointers = cStrings(argv)
        let envPointers = cStrings(env)
        defer { for pointer in argvPointers + envPointers { free(pointer) } }
        let status = posix_spawn(&pid, binary, &actions, nil, argvPointers, envPointers)
        guard status == 0 else { return Result(status: -1, standardOutput: "", standardError: "spawn failed: \(status)") }
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
        let code = (exitStatus & 0x7F) == 0 ? (exitStatus >> 8) & 0xFF : 128 + (exitStatus & 0x7F)
        return Result(status: code, standardOutput: read(outputPath), standardError: read(errorPath))
    }

    /// C strings for `argv` and `envp`, ending with a null pointer; the caller frees them.
    static func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
        strings.map { strdup($0) } + [nil]
    }

    static func write(_ text: String, to path: String) {
        guard let file = fopen(path, "w") else { return }
        _ = text.utf8CString.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count - 1, file) }
        fclose(file)
    }

    static func read(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A fresh temporary directory, removed (with the files in it and one level of subdirectories) at the end.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/suggest-cli-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        path = made.map { String(cString: $0) } ?? "/tmp"
    }

    deinit { TemporaryDirectory.remove(path) }

    static func remove(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard name != "." && name != ".." else { continue }
                if unlink(path + "/" + name) != 0 { remove(path + "/" + name) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
}

/// The package's root, for `SampleData/`.
let packageRoot: String = {
    let file = #filePath
    return file.firstRange(of: "/Tests/").map { String(file[..<$0.lowerBound]) } ?? "."
}()
