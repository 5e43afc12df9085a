// http-probe: a trivial server on HTTPServer, for wrk and perf, and for the tests that need a process of its own.
// Everything that a worker thread calls lives in Probe.swift: a closure written here would be MainActor-isolated.
import CSystem

exit(Probe.run(CommandLine.arguments))
