# Sourced by build-speedb.sh and build-rocksdb-release.sh: the Linux feature macros
# librocksdb-sys 0.19 defines for RocksDB, which libspeedb-sys 0.0.5 and older
# librocksdb-sys releases (0.11, 8.1.1) leave out. Without them RocksDB finds the
# current CPU with CPUID, a VM exit per call under a hypervisor (Speedb's reads and
# writes ran 30x slower here), and never calls fallocate or sync_file_range. Defined
# for every build, so releases and Speedb differ from the default build only in code.
export CXXFLAGS="${CXXFLAGS:-} -DROCKSDB_SCHED_GETCPU_PRESENT -DROCKSDB_AUXV_GETAUXVAL_PRESENT -DROCKSDB_FALLOCATE_PRESENT -DROCKSDB_RANGESYNC_PRESENT"
