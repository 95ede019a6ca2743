import Crypto
import HTTPCaching
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CertificateAuthority {
    /// The certificate's file name in an authority's folder.
    public static let certificateFileName = "ca.pem"
    /// The key's file name in an authority's folder.
    static let keyFileName = "ca-key.pem"

    /// The authority kept in `folder`, made there first if the folder has none.
    ///
    /// A new authority is written to a private folder beside `folder` and moved into place in one
    /// rename, so two processes starting at once end up sharing one authority. The folder must be
    /// this user's alone (mode 0700) and the key file unreadable by others (0600); otherwise this
    /// fails rather than use a key that may have leaked.
    public static func load(orCreateIn folder: URL) throws -> CertificateAuthority {
        if let existing = try load(from: folder) { return existing }
        let parent = folder.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw CertificateAuthorityError(.ioFailure, "cannot create \(parent.path): \(error)")
        }
        let staging = parent.appendingPathComponent(
            ".\(folder.lastPathComponent)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        guard mkdir(staging.path, 0o700) == 0 else {
            throw CertificateAuthorityError(
                .ioFailure, "cannot create \(staging.path): \(String(cString: strerror(errno)))")
        }
        defer { try? FileManager.default.removeItem(at: staging) }
        let made = try make()
        try writeFile(
            made.privateKey.pemRepresentation + "\n", to: staging.appendingPathComponent(keyFileName), mode: 0o600)
        try writeFile(made.certificatePEM, to: staging.appendingPathComponent(certificateFileName), mode: 0o644)
        if rename(staging.path, folder.path) != 0 && errno != EEXIST && errno != ENOTEMPTY {
            throw CertificateAuthorityError(
                .ioFailure,
                "cannot move the new certificate authority into \(folder.path): \(String(cString: strerror(errno)))")
        }
        // Moved in, or another process's authority got there first: either way, use what is there.
        guard let authority = try load(from: folder) else {
            throw CertificateAuthorityError(
                .damaged, "the certificate authority in \(folder.path) vanished while it was made")
        }
        return authority
    }

    /// The authority in `folder`; `nil` when the folder does not exist.
    public static func load(from folder: URL) throws -> CertificateAuthority? {
        var folderStatus = stat()
        guard stat(folder.path, &folderStatus) == 0 else {
            if errno == ENOENT { return nil }
            throw CertificateAuthorityError(
                .ioFailure, "cannot read \(folder.path): \(String(cString: strerror(errno)))")
        }
        try requirePrivate(folderStatus, path: folder.path, kind: "folder")
        let keyFile = folder.appendingPathComponent(keyFileName)
        let certificateFile = folder.appendingPathComponent(certificateFileName)
        var keyStatus = stat()
        guard stat(keyFile.path, &keyStatus) == 0 else {
            throw CertificateAuthorityError(
                .damaged,
                "\(folder.path) has no \(keyFileName): move the folder aside to make a new authority (and trust its certificate again)"
            )
        }
        try requirePrivate(keyStatus, path: keyFile.path, kind: "key file")
        let keyText: String
        let certificateText: String
        do {
            keyText = try String(contentsOf: keyFile, encoding: .utf8)
            certificateText = try String(contentsOf: certificateFile, encoding: .utf8)
        } catch {
            throw CertificateAuthorityError(
                .ioFailure, "cannot read the certificate authority in \(folder.path): \(error)")
        }
        let key: P256.Signing.PrivateKey
        let certificate: Certificate
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: keyText)
            certificate = try Certificate(pemEncoded: certificateText)
        } catch {
            throw CertificateAuthorityError(
                .damaged,
                "the certificate authority in \(folder.path) is damaged (\(error)): move the folder aside to make a new one"
            )
        }
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw CertificateAuthorityError(
                .damaged,
                "\(certificateFile.path) does not belong to the key beside it: move the folder aside to make a new authority"
            )
        }
        return try CertificateAuthority(certificate: certificate, privateKey: key, certificateFile: certificateFile)
    }

    /// Fails unless only the owner may read (and enter) what `status` describes.
    private static func requirePrivate(_ status: stat, path: String, kind: String) throws {
        let others = status.st_mode & 0o077
        guard others == 0 else {
            throw CertificateAuthorityError(
                .unsafePermissions,
                "the certificate authority's \(kind) \(path) is open to other users (mode \(String(status.st_mode & 0o777, radix: 8))); run chmod go-rwx on it, or move the folder aside to make a new authority"
            )
        }
        guard status.st_uid == getuid() else {
            throw CertificateAuthorityError(
                .unsafePermissions, "the certificate authority's \(kind) \(path) belongs to another user")
        }
    }

    /// Writes `text` to a new file created with `mode` (never widened by the umask's absence).
    private static func writeFile(_ text: String, to file: URL, mode: mode_t) throws {
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw CertificateAuthorityError(
                .ioFailure, "cannot create \(file.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                throw CertificateAuthorityError(
                    .ioFailure, "cannot write \(file.path): \(String(cString: strerror(errno)))")
            }
            written += result
        }
        guard fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else {
            throw CertificateAuthorityError(
                .ioFailure, "cannot write \(file.path): \(String(cString: strerror(errno)))")
        }
    }
}
