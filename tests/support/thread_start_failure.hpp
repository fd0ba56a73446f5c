// Makes every new std::thread fail to start (std::system_error), for testing the fallback of
// gorge/detail/parallel.hpp: while the guard lives, glibc's default thread attributes ask for a
// 2^60-byte stack, which no thread can get. The destructor restores the previous defaults.
// active() says whether the trick worked on this machine (a probe thread failed to start).
#pragma once

#if defined(__GLIBC__)
#include <pthread.h>

#include <cstddef>
#include <system_error>
#include <thread>

namespace gorge_test {

class thread_start_failure {
public:
    thread_start_failure() {
        have_saved_ = pthread_getattr_default_np(&saved_) == 0;
        have_huge_ = pthread_getattr_default_np(&huge_) == 0;
        configured_ = have_saved_ && have_huge_ && pthread_attr_setstacksize(&huge_, std::size_t(1) << 60) == 0 &&
                      pthread_setattr_default_np(&huge_) == 0;
        if (!configured_) return;
        try {
            std::thread probe([] {});
            probe.join();
        } catch (const std::system_error&) {
            active_ = true;
        }
    }
    ~thread_start_failure() {
        if (configured_) pthread_setattr_default_np(&saved_);
        if (have_huge_) pthread_attr_destroy(&huge_);
        if (have_saved_) pthread_attr_destroy(&saved_);
    }
    thread_start_failure(const thread_start_failure&) = delete;
    thread_start_failure& operator=(const thread_start_failure&) = delete;

    /// True when the huge default stack was set (every glibc call succeeded).
    bool configured() const { return configured_; }
    /// True when a probe thread then failed to start.
    bool active() const { return active_; }

private:
    pthread_attr_t saved_{}, huge_{};
    bool have_saved_ = false, have_huge_ = false, configured_ = false, active_ = false;
};

}  // namespace gorge_test

#endif  // __GLIBC__
