#!/usr/bin/env bash
# Formats the Swift code as .swift-format says (120 columns); CI fails on anything left unformatted.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift format format --in-place --recursive --parallel Sources Tests Benchmarks Fuzz Package.swift
swift format lint --strict --recursive --parallel Sources Tests Benchmarks Fuzz Package.swift
