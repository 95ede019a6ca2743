import CProcessorAffinity
import NIOCore

/// The processors this process may run on.
public enum ProcessorAffinity {
    /// How many cores this process may use: the machine's cores, limited by the cgroup's CPU
    /// quota or cpuset (`System.coreCount`) and by the affinity mask (`taskset`), where the
    /// platform has one. At least 1.
    public static var usableCores: Int {
        let allowed = Int(webcache_allowed_processor_count())
        return max(1, allowed > 0 ? min(System.coreCount, allowed) : System.coreCount)
    }
}
