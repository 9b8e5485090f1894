import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.shell.MetadataShell;
import org.apache.kafka.shell.command.Commands;
import org.apache.kafka.shell.state.MetadataShellState;

/**
 * kafka-metadata-shell on one file, for several commands in one JVM: args are FILE then
 * commands separated by "--next"; each command's output is followed by a line "--end--".
 * The first command runs as the shell's main runs one (MetadataShell.run: load the file, wait
 * until caught up, run); the others through the same Commands parser on the state it loaded.
 * The shell's main itself is not used: kafka-shell is published up to 4.3.1, whose main calls
 * classes Kafka 4.4 moved (the two small classes beside this file stand in for them).
 */
public class MetadataShellRun {
    public static void main(String[] args) throws Exception {
        List<List<String>> commands = new ArrayList<>();
        commands.add(new ArrayList<>());
        for (String arg : Arrays.asList(args).subList(1, args.length)) {
            if (arg.equals("--next")) {
                commands.add(new ArrayList<>());
            } else {
                commands.get(commands.size() - 1).add(arg);
            }
        }
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
            new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8)));
        MetadataShell shell = new MetadataShell.Builder().setSnapshotPath(args[0]).build();
        // MetadataShell.run closes the writer it wraps System.out in: not stdout itself
        System.setOut(new PrintStream(new FilterOutputStream(
            new FileOutputStream(FileDescriptor.out)) {
            @Override
            public void close() throws IOException {
                flush();
            }
        }, true, "UTF-8"));
        try {
            shell.run(commands.get(0));
            out.println("--end--");
            Field field = MetadataShell.class.getDeclaredField("state");
            field.setAccessible(true);
            MetadataShellState state = (MetadataShellState) field.get(shell);
            for (List<String> command : commands.subList(1, commands.size())) {
                new Commands(false).parseCommand(command).run(Optional.empty(), out, state);
                out.println("--end--");
            }
            out.flush();
        } finally {
            shell.close();
        }
        Runtime.getRuntime().halt(0);
    }
}
