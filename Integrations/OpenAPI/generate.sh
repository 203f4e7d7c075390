#!/usr/bin/env bash
# Regenerates the test client from Tests/CourierOpenAPITests/openapi.yaml with
# swift-openapi-generator 1.14 (committed, so that CI does not build the generator):
#   Integrations/OpenAPI/generate.sh
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/noop"
echo 'print("noop")' > "$work/Sources/noop/main.swift"
cat > "$work/Package.swift" <<'SWIFT'
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3")],
    targets: [.executableTarget(name: "noop", dependencies: [.product(name: "swift-openapi-generator", package: "swift-openapi-generator")])]
)
SWIFT
swift build --package-path "$work" --product swift-openapi-generator
"$work/.build/debug/swift-openapi-generator" generate \
    --config Tests/CourierOpenAPITests/openapi-generator-config.yaml \
    --output-directory Tests/CourierOpenAPITests/Generated \
    Tests/CourierOpenAPITests/openapi.yaml
