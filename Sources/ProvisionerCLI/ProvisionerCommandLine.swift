#if canImport(Glibc)
import Glibc
#endif

/// The `provisioner` entry point: picks the subcommand and runs it.
public enum ProvisionerCommandLine {
    /// Every subcommand, in the order `--help` lists them.
    static var commands: [any Command.Type] { [
        DemoCommand.self,
        WorkerCommand.self,
        BrokerCommand.self,
        SimulatorCommand.self,
        ProduceCommand.self,
        DLQCommand.self,
        ConsoleCommand.self,
        TopicsCommand.self,
        ConfigCommand.self,
        RequestCommand.self,
        SimulateCommand.self,
        VersionCommand.self,
    ] }

    /// Runs the command line `words` (without the program name) and returns the exit status.
    public static func run(_ words: [String]) -> Int32 {
        guard let name = words.first, name != "--help", name != "-h", name != "help" else {
            print(overview)
            return words.isEmpty ? 2 : 0
        }
        let word = name == "--version" ? VersionCommand.name : name
        guard let command = commands.first(where: { $0.name == word }) else {
            printError("provisioner: unknown command '\(name)'. Run 'provisioner --help' for the list.")
            return 2
        }
        return exitStatus(of: "provisioner \(name)") {
            var arguments = try CommandArguments(Array(words.dropFirst()), switchNames: command.switchNames.union(["help"]))
            if arguments.flag("help") {
                print(command.help)
                return 0
            }
            return try command.run(&arguments)
        }
    }

    static var overview: String {
        var lines = [
            "provisioner: adds payment cards to Apple Pay and Google Wallet from Kafka requests.",
            "",
            "usage: provisioner <command> [options]   (every command takes --help)",
            "",
            "commands:",
        ]
        let width = commands.map { $0.name.count }.max() ?? 0
        for command in commands {
            lines.append("  " + command.name + String(repeating: " ", count: width + 2 - command.name.count) + command.summary)
        }
        return lines.joined(separator: "\n")
    }
}

/// Runs the command line `program` (`provisioner config`, `provisioner-bench`) and returns its
/// exit status: what `body` returns, or for what it throws one line on standard error and 2 (a
/// usage error, with a pointer to `<program> --help`), the failure's own status, or 1.
public func exitStatus(of program: String, _ body: () throws -> Int32) -> Int32 {
    do {
        return try body()
    } catch let error as UsageError {
        printError("\(program): \(error.message) (see '\(program) --help')")
        return 2
    } catch let failure as CommandFailure {
        printError("\(program): \(failure.message)")
        return failure.exitStatus
    } catch {
        printError("\(program): \(error)")
        return 1
    }
}

/// Writes one line to standard error.
public func printError(_ line: String) {
    var text = line
    text.append("\n")
    text.withCString { pointer in _ = write(2, pointer, strlen(pointer)) }
}
