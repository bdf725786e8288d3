import ProvisionerCLI

#if canImport(Glibc)
import Glibc
#endif

exit(ProvisionerCommandLine.run(Array(CommandLine.arguments.dropFirst())))
