#ifndef WEBCACHE_PROCESSOR_AFFINITY_H
#define WEBCACHE_PROCESSOR_AFFINITY_H

/// How many processors the calling process may run on (its affinity mask, as `taskset` sets
/// it); 0 where the platform does not say.
int webcache_allowed_processor_count(void);

#endif
