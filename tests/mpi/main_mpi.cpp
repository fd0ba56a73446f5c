// Test runner for gorge::mpi: every rank runs the same Catch2 session between MPI_Init and
// MPI_Finalize (the test cases call collective functions in the same order on every rank). The
// exit status is non-zero on every rank when any rank had a failure.
#include <mpi.h>

#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int failed = Catch::Session().run(argc, argv) != 0 ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
