/// Something that sends one HTTP request and returns its response head with its body: one hop,
/// nothing more. Courier's ``Exchange`` builds every guarantee of a call on top of it, once for
/// all transports.
///
/// A transport does **not** follow redirects (a `3xx` is handed back like any other response),
/// and leaves to the ``Exchange`` what belongs to a whole call: the ``RedirectPolicy`` and its
/// credential rules, per-hop middleware, settling heads that are not final answers, and attaching
/// the request to errors. What it keeps is what only it can do: speak HTTP on its library,
/// render the request, report upload progress, stop the transfer when the body stream is
/// stopped or dropped, and stop promptly when the task is cancelled.
///
/// Courier ships ``URLSessionTransport`` (and, in its own package, `AsyncHTTPClientTransport`);
/// ``InMemoryExecutor`` and ``HARReplayExecutor`` are exchanges over transports of their own, so
/// stubs and recordings go through every step the network does.
///
/// ```swift
/// struct Canned: Transport {
///     func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse {
///         StreamedResponse(status: 200, body: ByteStream(Data("hello".utf8)))
///     }
/// }
/// let executor = Exchange(transport: Canned())
/// ```
public protocol Transport: Sendable {
    /// Sends `request`, exactly as given, and returns as soon as its head arrives, with the body
    /// in hand or still arriving. A redirect is a response like any other.
    ///
    /// Implementations must not send a request with ``Request/problems`` (rendering it with
    /// ``Request/urlRequest()`` checks this).
    /// - Parameters:
    ///   - request: The request of this hop.
    ///   - options: How the body is delivered: buffer limits, upload progress, whether the
    ///     caller reads it whole.
    /// - Returns: The response head and its body, whatever the status.
    /// - Throws: The failure before the head arrived; the ``Exchange`` maps it to
    ///   ``CourierError`` with the request attached. Later failures are thrown by the body.
    func send(hop request: Request, options: StreamOptions) async throws -> StreamedResponse
}

/// A transport that, asked for a body in hand (``StreamOptions/buffersBody``) with
/// ``StreamOptions/rules``, gathers it held to those rules from its first byte (the size limit
/// counts the bytes, the idle timer watches them arrive) and returns once it is complete: one
/// wake-up for the caller instead of one per chunk, and no task of its own for the hop's timer.
/// The exchange asks any other transport to stream whenever a rule has to watch the body.
///
/// For Courier's own transports (URLSession, CourierNIO, AsyncHTTPClient): what the rules ask of
/// the transport is in ``BodyRules``.
@_spi(Transports) public protocol GathersUnderRules: Transport {}

/// A transport that can switch a hop's connection to another protocol (``HTTPUpgrade``): it
/// honours ``StreamOptions/upgrade``. Executors check for it before they send an upgrade, so a
/// transport that cannot is a typed error with nothing sent.
public protocol UpgradesConnections: Transport {}
