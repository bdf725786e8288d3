import ProvisionerBench

#if canImport(Glibc)
import Glibc
#endif

exit(BenchCommandLine.run(Array(CommandLine.arguments.dropFirst())))
