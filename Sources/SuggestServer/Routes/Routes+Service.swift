import HTTPServer
import SuggestCore

extension Routes {
    /// `GET /v1/health/live`: the process answers.
    static let live: Router.Endpoint = { _ in
        json { writer in
            writer.beginObject()
            writer.key("status")
            writer.string("live")
            writer.endObject()
        }
    }

    /// `GET /v1/health/ready`: 200 while the server takes traffic; 503 while it starts, drains, or its store could
    /// not record a donation (`DonationStore.checkHealth`: unreachable, deleted, read-only), asked again at every
    /// call, so a store that comes back makes the server ready again.
    static let ready: Router.Endpoint = { call in
        let api = call.api
        if api.readiness != .draining {
            do {
                try call.withStore { store in try store.checkHealth() }
                api.readiness = .ready
            } catch {
                // The route needs no key: its reason says what kind of failure, the log the store's own words
                // (paths, nodes), once for each new failure.
                let reason =
                    (error as? StoreError).map { APIError.describe($0.kind) } ?? "the store cannot be reached now"
                if api.readiness != .storeUnavailable(reason) {
                    api.log.event("store not ready", [("reason", reason), ("error", "\(error)")])
                }
                api.readiness = .storeUnavailable(reason)
            }
        }
        let readiness = api.readiness
        let (status, word, reason): (HTTPStatus, String, String?) =
            switch readiness {
            case .ready: (.ok, "ready", nil)
            case .starting: (.serviceUnavailable, "starting", nil)
            case .draining: (.serviceUnavailable, "draining", "the server is stopping")
            case .storeUnavailable(let why): (.serviceUnavailable, "store_unavailable", why)
            }
        return json(
            { writer in
                writer.beginObject()
                writer.key("status")
                writer.string(word)
                writer.optional("reason", reason)
                if status != .ok {
                    // The contract's error object beside the status, as every other 503 has it: a client that reads
                    // errors one way needs no case for this route.
                    writer.key("error")
                    writer.beginObject()
                    writer.key("code")
                    writer.string(word)
                    writer.key("message")
                    writer.string(reason ?? "the server is starting; retry in a moment")
                    writer.endObject()
                }
                writer.endObject()
            }, status: status)
    }

    /// `GET /v1/version`.
    static let version: Router.Endpoint = { _ in
        json { writer in
            writer.beginObject()
            writer.key("name")
            writer.string("suggest")
            writer.key("version")
            writer.string(Release.version)
            writer.key("api")
            writer.string("v1")
            writer.endObject()
        }
    }

    /// `GET /v1/openapi.json`: the OpenAPI 3.1 document of this API.
    static let openAPI: Router.Endpoint = { _ in
        HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: OpenAPIDocument.bytes)
    }

    /// `GET /metrics`: Prometheus' text format.
    static let metrics: Router.Endpoint = { call in
        HTTPResponse.text(call.api.metrics.text(), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }
}
