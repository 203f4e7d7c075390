// An echo server on hummingbird-websocket for the WebSocket benchmark: every message comes back as
// it came (text as text, binary as binary), up to 64 MiB; permessage-deflate is offered to a
// client that asks for it (zlib, through swift-websocket's WSCompression).
//
//   WebSocketEchoServer PORT     listens on 127.0.0.1:PORT (0: a free port), prints
//                                "listening on PORT" once it accepts connections
import Foundation
import Hummingbird
import HummingbirdWSCompression
import HummingbirdWebSocket
import Logging

let arguments = CommandLine.arguments
guard arguments.count == 2, let port = Int(arguments[1]), (0...65535).contains(port) else {
    FileHandle.standardError.write(Data("usage: WebSocketEchoServer PORT\n".utf8))
    exit(2)
}
let limit = 64 << 20
var logger = Logger(label: "WebSocketEchoServer")
logger.logLevel = .warning

let app = Application(
    router: Router(),
    server: .http1WebSocketUpgrade(
        configuration: .init(
            ws: .init(maxFrameSize: limit, extensions: [.perMessageDeflate(maxDecompressedFrameSize: limit)]))
    ) { _, _, _ in
        .upgrade([:]) { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: limit) {
                switch message {
                case .text(let text): try await outbound.write(.text(text))
                case .binary(let bytes): try await outbound.write(.binary(bytes))
                }
            }
        }
    },
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    onServerRunning: { channel in
        FileHandle.standardOutput.write(Data("listening on \(channel.localAddress?.port ?? port)\n".utf8))
    },
    logger: logger
)
try await app.runService()
