// LeakSanitizer reports leaks when the process exits. The Vulkan loader closes the driver
// libraries (ICDs) it opened when the instance is destroyed, so a block a driver leaked is reported
// against an "<unknown module>" that no suppression by module name can match. This test binary
// therefore keeps every dynamically opened library mapped until exit by defining dlclose itself:
// the executable's definition takes precedence over libc's for every library it loads (ELF symbol
// interposition). A library stays mapped, its code is not run again, so behaviour is otherwise
// unchanged; the driver's leaks are then named and suppressed (lsan.supp), while a leak in
// gorge's own code or in this test still fails it.
extern "C" int dlclose(void*) { return 0; }
