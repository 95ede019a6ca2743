import CAllocatorTuning

/// Tunes the C allocator for a long-running server.
enum MemoryAllocation {
    /// Keeps blocks up to 8 MiB in the allocator's heap instead of fresh `mmap`s. A proxy
    /// answering hits builds a response buffer per request; for bodies past glibc's default
    /// threshold (128 KiB, adapting only after a free) each buffer would otherwise be a new
    /// mapping — a page fault and a zeroed page per 4 KiB, then an unmap — which costs more than
    /// the copy itself. Memory stays bounded: freed blocks are reused, and the heap is trimmed
    /// past 32 MiB free at its top. No effect off glibc.
    static func tuneForServing() {
        _ = webcache_tune_allocator(8 << 20, 32 << 20)
    }
}
