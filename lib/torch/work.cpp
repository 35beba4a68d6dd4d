// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: Work objects and their completion through the
 * communicator's eventfd.
 *
 * The engine's thread sleeps in poll() on two eventfds: the
 * communicator's (the module signals it once per completed operation) and
 * its own stop_fd_.  Woken, it clears the counter first and only then tests
 * the pending requests, so a completion that lands during the pass
 * signals again and is seen on the next one.  coll_test() reaps up to 16
 * completions per call and every pending request is tested, so a burst of
 * any size is collected in one pass.
 *
 * Completing a Work runs its Future's callbacks (DDP's reducer) in this
 * thread, outside the lock, as gloo's worker threads do.
 */
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kcoll_torch.hpp"

namespace kcoll_torch {

WorkKcoll::WorkKcoll(int rank, c10d::OpType type, const char *w, std::vector<at::Tensor> outputs)
	: c10d::Work(rank, type), what(w), outputs_(std::move(outputs)),
	  future_(c10::make_intrusive<c10::ivalue::Future>(
		  c10::ListType::create(c10::TensorType::get())))
{
}

std::vector<at::Tensor> WorkKcoll::result()
{
	return outputs_;
}

c10::intrusive_ptr<c10::ivalue::Future> WorkKcoll::getFuture()
{
	return future_;
}

void WorkKcoll::complete(int err, const std::string &msg)
{
	std::exception_ptr e;

	if (!err && after) {
		try {
			after();
		} catch (const std::exception &x) {
			e = std::make_exception_ptr(std::runtime_error(
				std::string("kcoll ") + what + ": copying the result out failed: " +
				x.what()));
		}
	}
	if (err)
		e = std::make_exception_ptr(std::runtime_error(
			std::string("kcoll ") + what + " failed: " + msg));
	/* The buffers are the kernel's no more. */
	keep.clear();
	after = nullptr;
	if (e) {
		future_->setError(e);
		finish(e);
	} else {
		future_->markCompleted(c10::IValue(outputs_));
		finish();
	}
}

Engine::Engine(coll_comm_t *comm) : comm_(comm)
{
	stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop_fd_ < 0)
		throw std::runtime_error(std::string("kcoll: eventfd: ") + strerror(errno));
	thread_ = std::thread(&Engine::loop, this);
}

Engine::~Engine()
{
	uint64_t one = 1;

	if (write(stop_fd_, &one, sizeof(one)) != sizeof(one))
		perror("kcoll: stopping the completion thread");
	thread_.join();
	/* The module cancels what is still running; nobody will see its buffers. */
	for (auto &w : pending_)
		w->complete(-ECANCELED, "the process group was destroyed before the operation "
			    "completed");
	pending_.clear();
	coll_comm_destroy(comm_);
	close(stop_fd_);
}

void Engine::submit(const c10::intrusive_ptr<WorkKcoll> &w,
		    const std::function<int(coll_request_t **)> &start)
{
	std::lock_guard<std::mutex> lock(mu_);
	int err = start(&w->req);

	if (err)
		throw std::runtime_error(std::string("kcoll ") + w->what + ": " +
					 (*coll_last_error() ? coll_last_error() :
					  coll_strerror(err)));
	pending_.push_back(w);
}

int Engine::locked(const std::function<int(coll_comm_t *)> &f)
{
	std::lock_guard<std::mutex> lock(mu_);

	return f(comm_);
}

void Engine::loop()
{
	struct pollfd p[2] = {
		{ coll_comm_event_fd(comm_), POLLIN, 0 },
		{ stop_fd_, POLLIN, 0 },
	};
	struct done {
		c10::intrusive_ptr<WorkKcoll> w;
		int err;
		std::string msg;
	};

	for (;;) {
		std::vector<done> ended;
		uint64_t v;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("kcoll: completion thread: poll");
			return;
		}
		if (p[1].revents)
			return;
		/* Nonblocking: 0 pending completions is EAGAIN, not a hang. */
		if (read(p[0].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			perror("kcoll: completion thread: read eventfd");
		{
			std::lock_guard<std::mutex> lock(mu_);

			for (auto it = pending_.begin(); it != pending_.end();) {
				struct coll_status st;
				int finished = 0, ret;

				ret = coll_test(&(*it)->req, &finished, &st);
				if (!finished && !ret) {
					++it;
					continue;
				}
				/*
				 * Not finished but an error: collecting completions
				 * failed (the file is broken); the request stays
				 * libcoll's, freed by coll_comm_destroy().
				 */
				ended.push_back({ *it, ret, ret ? coll_last_error() : "" });
				it = pending_.erase(it);
			}
		}
		for (auto &d : ended)
			d.w->complete(d.err, d.msg.empty() ? coll_strerror(d.err) : d.msg);
	}
}

} // namespace kcoll_torch
