import CSystem
import Dispatch
import HTTPServer
import SuggestCore
import Synchronization

/// Re-reads the keys file when it changes (`KeyRing.FileVersion`, checked every 2 seconds) or on SIGHUP; a file that
/// cannot be used leaves the keys as they were, and says why. A file that lists no key revokes every key (each
/// request that needs one gets 401); a file removed keeps them, and says so once (a deployment that replaces the
/// file by a rename never has it missing, so a missing file is a mistake more likely than a revocation).
final class KeysWatch: Sendable {
    private let path: String?
    private let version: Mutex<KeyRing.FileVersion?>
    /// Whether the watch has said that the file is missing, since it last found it.
    private let missingReported = Mutex(false)
    /// What the last reload that the system failed said, until a reload reads the file (kept or refused): said once
    /// while the watch meets it, and tried at every check.
    private let momentaryReported = Mutex<String?>(nil)
    private let api: API
    private let task: Mutex<PeriodicTask?> = Mutex(nil)
    /// Held across a reload, from reading the file to keeping its keys and version: a SIGHUP's reload and the
    /// watch's may run at once, and the one that read the older file must not be the one whose keys stay, under
    /// the newer file's version, which no later check would find changed.
    private let reloading = Mutex(())

    init(path: String?, version: KeyRing.FileVersion?, api: API) {
        self.path = path
        self.version = Mutex(version)
        self.api = api
    }

    func start() {
        guard path != nil else { return }
        let task = PeriodicTask(label: "suggest.keys", every: .seconds(2)) { [self] in
            guard let path else { return }
            let current: KeyRing.FileVersion
            switch KeyRing.FileVersion.look(at: path) {
            case .success(let version):
                current = version
            case .failure(let error):
                if !missingReported.withLock({ reported in defer { reported = true }; return reported }) {
                    // A directory the server may not search is not a missing file: say what the system said.
                    let missing = ErrorNumber.meansAbsent(error.number)
                    api.log.event(
                        missing ? "keys file missing; the old keys stay" : "keys file out of reach; the old keys stay",
                        [("path", path)]
                            + (missing ? [] : [("error", ErrorNumber.describe(error.number))])
                            + [("hint", "to revoke every key, write {\"keys\": []} into it")])
                }
                return
            }
            missingReported.withLock { $0 = false }
            if version.withLock({ $0 }) != current { reload(reason: Self.fileChanged) }
        }
        self.task.withLock { $0 = task }
        task.start()
    }

    func stop() { task.withLock { $0 }?.stop() }

    /// The reason the watch gives its reloads.
    private static let fileChanged = "the file changed"

    func reload(reason: String) {
        guard let path else {
            api.log.event("keys not reloaded", [("reason", "the server has no keys file")])
            return
        }
        reloading.withLock { _ in reload(from: path, reason: reason) }
    }

    private func reload(from path: String, reason: String) {
        do {
            let file = try KeyRing.load(path: path, allowingNoKey: true)
            api.replaceKeys(file.ring)
            version.withLock { $0 = file.version }
            momentaryReported.withLock { $0 = nil }
            var fields = [("why", reason)]
            var warnings = file.warnings
            if file.ring.entries.isEmpty {
                warnings.append(KeyRing.noKeyWarning)
            }
            if !warnings.isEmpty { fields.append(("warning", warnings.joined(separator: "; "))) }
            api.log.event("keys reloaded", fields, counts: [("tenants", file.ring.tenantCount)])
        } catch where error.isMomentary {
            // The system failed, not the file (no descriptor left under a flood of connections): its version is
            // left as it was, so that the next check reads it again. Kept as refused, a revocation written while
            // the server had no descriptor to spare stayed unapplied until the file changed again.
            let said = momentaryReported.withLock { said in defer { said = error.description }; return said }
            // Once while the watch meets it; every time an operator asks (SIGHUP).
            if said != error.description || reason != Self.fileChanged {
                api.log.event("keys not reloaded yet; the old keys stay", [("error", error.description)])
            }
        } catch {
            momentaryReported.withLock { $0 = nil }
            // The refused version is kept anyway, so that a broken file is reported once, not every 2 seconds;
            // making it usable (an edit, a rename into place, a chmod) is a new version. The version of the file
            // that was read, not of what the path names a moment later, which may already be the fix.
            let refused = error.version ?? KeyRing.FileVersion.of(path: path)
            version.withLock { $0 = refused }
            api.log.event("keys not reloaded; the old keys stay", [("error", error.description)])
        }
    }
}
