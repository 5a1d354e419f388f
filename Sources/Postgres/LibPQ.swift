import CPostgres

/// libpq, loaded the first time a connection or a conninfo parse needs it (`dlopen` of
/// `libpq.so.5`, then `dlsym` of each function this module calls; `cpq_load` in CPostgres).
///
/// The executable does not link libpq: loading it and the 21 libraries it needs (libssl, libkrb5,
/// libldap, libgnutls and more) cost every start about 6 ms, a command that never syncs too
/// (docs/benchmarks.md, "Start-up"). The functions' types come from libpq-fe.h (``cpq_library``).
enum LibPQ {
    /// The loaded functions, or why libpq could not be loaded; computed once (a global's lazy
    /// initialisation, which Swift runs once under its own lock) and never changed after.
    private static let loaded: Result<cpq_library, PostgresError> = {
        var library = cpq_library()
        if let failure = cpq_load(&library) {
            return .failure(PostgresError(.client, "cannot load libpq (\(CPQ_SONAME)): " + String(cString: failure)))
        }
        return .success(library)
    }()

    /// libpq's functions, loading the library on the first call.
    ///
    /// - Throws: ``PostgresError`` of kind `client` when libpq is not installed (Debian: libpq5)
    ///   or lacks a function.
    static func functions() throws(PostgresError) -> cpq_library {
        try loaded.get()
    }
}

extension String {
    /// A C string libpq returned, "" for NULL: through a function pointer its results import as
    /// optionals, where a direct call's were implicitly unwrapped (libpq returns NULL from
    /// `PQerrorMessage` and the like only for a NULL connection or result).
    init(libpq pointer: UnsafePointer<CChar>?) {
        self = pointer.map { String(cString: $0) } ?? ""
    }
}
