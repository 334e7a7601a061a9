// SPDX-License-Identifier: GPL-2.0
/*
 * kosa8_ws9p: the guest kernel's 9p client speaking straight to the workspace's virtio-serial port.
 *
 * Stock Linux offers 9p over fd, unix, tcp, rdma, xen and virtio (QEMU's virtio-9p, which blocks
 * snapshots). The fd transport cannot write a virtio-serial port ("kernel write not supported"), so without
 * this module a process in the guest (the agent's relay) carries every request between pipes and the
 * port: several work items, wake-ups and copies per request, all emulated under TCG. This module is a
 * 9p transport, "kosa8", and the driver of the workspace's virtio-serial device:
 *
 *   - a request is put on the port's transmit queue from the caller's own context and the queue kicked;
 *     QEMU hands it to the daemon's socket before the kick returns;
 *   - replies arrive in the receive queue's page buffers as a byte stream (QEMU's socket chardev reads
 *     4 KiB at a time); the queue's interrupt handler parses them, copies each reply into its request's
 *     buffer and completes it;
 *   - reads and writes of more than 1 KiB are zero-copy (the transport's zc_request): a Twrite's data
 *     go to QEMU from the writer's own pages, and a Tread's data land in the reader's own pages. Each
 *     copy this saves is a guest memcpy, which TCG runs at about 1.5 GB/s;
 *   - a large Rread's data come by the read window, a read-only virtio-blk disk the daemon writes
 *     (dev.kosa8.workspace ReadWindow): with the disk named in "read_window", the module asks for it
 *     (Twindow) and reads each Rreadw's slot with block requests straight into the reader's pages,
 *     then gives the slot back (Treturn); a smaller reply's data are copied there from the receive
 *     buffers. Only a zero-copy read can be answered so (the window's replies are of 32 KiB or more);
 *   - a Tclunk is answered here (the daemon is sent a Tclunkq, which it never answers), as the relay does,
 *     once the daemon has said it takes them (Tquiet/Rquiet after each Tversion; dev.kosa8.workspace
 *     QuietClunks documents the exchange).
 *
 * The device is a multiport virtio-serial device with one port (QEMU's virtserialport at id 1, named
 * dev.kosa8.ws9p). At boot virtio_console drives it like any other; the agent hands it over: it writes
 * the device's name to the "claim" parameter, unbinds it from virtio_console and binds it here. This
 * driver never takes a device it was not handed, whatever the load order.
 *
 * Everything on the transmit queue is held by a token of ours until QEMU gives it back: a request
 * with a reference of its own (a request failed by "abort" while QEMU still holds it, its host hung,
 * must not be freed under QEMU), our own messages in the token itself.
 *
 * State lives in guest RAM and QEMU's migrated virtio state, so a checkpoint or rewind needs nothing
 * from this module: the daemon's server is idle at the instant, so no message is half-way. A daemon
 * that dies loses its server: the agent then writes "abort", which fails every request waiting and
 * every later one of that mount, and mounts afresh; the new mount takes the device over from the dead
 * one. A port closed by the host (QEMU's PORT_OPEN 0) alone changes nothing: a rewind closes and reopens
 * it with the guest stopped.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/delay.h>
#include <asm/unaligned.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/workqueue.h>
#include <linux/namei.h>
#include <linux/dcache.h>
#include <linux/writeback.h>
#include <linux/backing-dev.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/uio.h>
#include <linux/hash.h>
#include <linux/idr.h>
#include <uapi/linux/magic.h>
#include <net/9p/9p.h>
#include <net/9p/client.h>
#include <net/9p/transport.h>

/*
 * kosa8's messages and the link's sizes. Their one definition is Java's dev.kosa8.protocol.Ws9p (the
 * protocol module), which the daemon and the agent compile against; these copies are checked against it
 * by a unit test (Ws9pModuleConstantsTest), which names any that differs. Kept here rather than generated
 * at image build, so this file stays whole and readable as it is compiled.
 */
#define WS_HDR 7			/* size[4] type[1] tag[2] */
#define WS_MAXSIZE ((1 << 20) + 24)	/* msize: 1 MiB of data a request (Linux takes 24 for the header) */
#define WS_PORT 1			/* the port's id on its device */
#define WS_CTL_BUFS 8
#define WS_CTL_SIZE 256			/* a control message, with a port's name after it */
#define WS_TLOPENQ 241			/* a read-only open answered here, on a cached mount */
#define WS_TLOPENQ_SIZE (WS_HDR + 8)	/* a Tlopen's size too: fid[4] flags[4] */
#define WS_RLOPEN_SIZE (WS_HDR + 17)	/* qid[13] iounit[4] */
#define WS_RSYNC 242			/* the cache's sync: every change the host saw before it is told */
#define WS_TSYNC 243
#define WS_SYNC_SIZE (WS_HDR + 4)	/* seq[4] */
#define WS_TWALKQ 244			/* a clone walk answered here, on a cached mount */
#define WS_TCACHE 245			/* the cache: dev.kosa8.workspace FolderNotices */
#define WS_RNOTICE 246
#define WS_TCLUNKQ 247
#define WS_TQUIET 248
#define WS_RQUIET 249
#define WS_TWINDOW 250			/* the read window: dev.kosa8.workspace ReadWindow */
#define WS_RREADW 251
#define WS_TRETURN 252
#define WS_TCLUNKQ_SIZE (WS_HDR + 4)	/* a Tclunk's size too: only the type differs */
#define WS_TWALKQ_SIZE (WS_HDR + 10)	/* a clone Twalk's size too: fid[4] newfid[4] nwname[2]=0 */
#define WS_OWN_MAX 20			/* the largest of our own messages, WS_TWALKQ_SIZE, rounded up */
#define WS_RWALK_CLONE_SIZE (WS_HDR + 2)	/* nwqid[2]=0 */
#define WS_RREADW_SIZE (WS_HDR + 12)	/* count[4] slot[4] serial[4] */
#define WS_TRETURN_SIZE (WS_HDR + 8)	/* slot[4] serial[4] */
#define WS_SLOT_SECTORS ((1 << 20) >> SECTOR_SHIFT)
#define WS_RREAD_HDR 11			/* Rread: size[4] type[1] tag[2] count[4] */
#define WS_COUNT_AT 19			/* count in a Tread, Twrite or Treaddir: fid[4] offset[8] after the header */
#define WS_BIO_BYTES (512 << 10)	/* one block request of a window read into pages: <= 129 of them */
#define WS_NOTICES_MAX (1 << 20)	/* notices received and not yet applied; past it, everything is dropped */
#define WS_NOTICE_ENTRY 10		/* dir[8] nlen[2], then the name, then kind[1] */
#define WS_NOTICE_GONE 0		/* nothing is there now */
#define WS_NOTICE_FILE 1		/* a file is there: its attributes follow */
#define WS_NOTICE_ATTRS 81		/* qidpath[8] qidtype[1] mode[4] uid[4] gid[4] nlink[8] size[8] blocks[8]
					 * atime[8] atimensec[4] mtime[8] mtimensec[4] ctime[8] ctimensec[4] */
#define WS_FLUSH_EVERY msecs_to_jiffies(20)	/* a cached mount's writes reach the host within this */
#define WS_LISTINGS_MAX (4 << 20)	/* directory listings kept, in bytes; past it, no more are kept */
#define WS_DIRFIDS 64			/* buckets of the open directories' fids */
#define WS_QUIET_BATCH 32		/* quiet messages held in the guest before they go to QEMU */
#define WS_CHANGED_BITS 10		/* 1,024 files whose latest change by the guest has its place kept */

enum ws_quiet { WS_QUIET_NO, WS_QUIET_ASKED, WS_QUIET_YES };

struct ws_dev {
	struct virtio_device *vdev;	/* NULL once the device is gone */
	struct virtqueue *rx, *tx, *crx, *ctx;
	spinlock_t lock;		/* everything below, and both data queues */
	wait_queue_head_t wait;		/* the port opened; the transmit queue has room */
	bool open;			/* QEMU added the port and we opened it */
	bool tx_room;
	struct block_device *window;	/* the read window's disk, or NULL */
	bool rreadw;			/* the message being received is an Rreadw */
	u8 body[12];			/* its body: count, slot, serial */
	atomic_t nwin;			/* window reads in flight */
	struct list_head txs;		/* tokens QEMU has not given back */
	unsigned int nclients;		/* mounts whose client->trans is this, a cut-off one included */
	struct p9_client *client;	/* the mount it serves, or NULL */
	struct list_head reqs;		/* sent, not yet answered */
	int err;			/* the mount's connection is broken: every request fails with it */
	enum ws_quiet quiet;
	/* the stream being received: the header gathered first, then the body copied into its request */
	u8 hdr[WS_HDR];
	u32 have;
	u32 size;
	struct p9_req_t *rreq;		/* the reply's request (a lookup reference), or NULL: skip it */
	struct ws_zc *rzc;		/* the reply's pages, where its request is zero-copy */
	struct list_head zcs;		/* zero-copy reads sent, with their pages */
	unsigned int nbufs;
	void **bufs;
	void *cbufs[WS_CTL_BUFS];
	/* the cache (below): the cached mount's super block, or NULL while the mount is not cached */
	struct super_block *sb;
	bool rnotice;			/* the message being received is an Rnotice */
	struct ws_notice *notice;	/* where its body goes, or NULL: skipped (and lost, if cached) */
	struct list_head notices;	/* received, not yet applied */
	u32 notice_bytes;
	bool notice_lost;		/* a notice could not be kept: everything cached is dropped instead */
	struct work_struct notice_work;
	struct delayed_work flush_work;
	struct list_head held;		/* quiet messages not yet on the transmit queue, in order */
	unsigned int nheld;
	struct delayed_work kick_work;	/* sends them a tick later, if nothing else has */
	struct mutex flushing;		/* the periodic flush, which a rename waits for */
	u32 sync_sent;			/* the last Tsync's seq */
	u32 sync_done;			/* the last Rsync's seq whose notices before it are applied */
	/* the directory listings (below), under lock */
	struct hlist_head dirfids[WS_DIRFIDS];
	struct list_head listings;
	u32 listing_bytes;
	u32 listing_gen;		/* moved on by every change: a listing read across one is not kept */
	/* the guest's own changes against the host's notices (below), under lock */
	u64 place;			/* the replies to changes received: a notice's and a change's place */
	struct ws_changed {
		u64 qpath;
		u64 place;
	} changed[1 << WS_CHANGED_BITS];	/* by qid path: the latest change's place of each */
	u64 changed_floor;		/* a change no longer listed, or of a file not known, was at most here */
	u64 settled;			/* every notice at or before this place is applied */
};

struct ws_notice {
	struct list_head node;
	bool rsync;			/* an Rsync: data holds its seq */
	u64 place;			/* the changes answered before it came (ws_dev's place) */
	u32 len;
	u8 data[];
};

/* The directory listings' (below) part in receiving. */
static void ws_listings_drop(struct ws_dev *d);
static void ws_listings_answered(struct ws_dev *d, struct p9_req_t *req, u8 rtype);
/* The order of the guest's changes against the host's notices (below): its part in receiving. */
static void ws_changes_answered(struct ws_dev *d, struct p9_req_t *req, u8 rtype);
static bool ws_is_change(struct p9_req_t *req);

static DEFINE_MUTEX(ws_mutex);		/* ws_the, probe, remove, create and close */
static struct ws_dev *ws_the;

static char ws_window[16];
module_param_string(read_window, ws_window, sizeof(ws_window), 0600);
MODULE_PARM_DESC(read_window, "MAJOR:MINOR of the read window's disk; written by the agent before it mounts");

static char ws_claim[32];
module_param_string(claim, ws_claim, sizeof(ws_claim), 0600);
MODULE_PARM_DESC(claim, "the virtio device (e.g. virtio3) this driver may take; written by the agent");

/* A counter, read-only under /sys/module/kosa8_ws9p/parameters/ */
#define WS_COUNTER(name, desc) \
	static unsigned long ws_##name; \
	module_param_named(name, ws_##name, ulong, 0444); \
	MODULE_PARM_DESC(name, desc)

WS_COUNTER(rx_bytes, "bytes received from the host");
WS_COUNTER(tx_bytes, "bytes sent to the host");
WS_COUNTER(quiet_clunks, "Tclunks answered in the guest");
WS_COUNTER(tx_waits, "times a request waited for room in the transmit queue");
WS_COUNTER(zc_requests, "reads and writes whose data went straight between the caller's pages and the host");
WS_COUNTER(listing_hits, "directory reads answered in the guest (cached mounts)");
WS_COUNTER(quiet_opens, "read-only opens answered in the guest (cached mounts)");
WS_COUNTER(quiet_walks, "clone walks answered in the guest (cached mounts)");
WS_COUNTER(quiet_unsent, "fids clunked before the host needed them: their walk, open and clunk never sent");
WS_COUNTER(notices, "notices of the host's changes received for the cache");
WS_COUNTER(notice_drops, "notices received while nothing was cached, or with no room to keep them");
WS_COUNTER(behind, "notices not applied to a file: the guest changed it after the host read it");
WS_COUNTER(stale_names, "cached names dropped because the host changed them");
WS_COUNTER(drops_all, "times everything cached was dropped");

/* What is on the transmit queue: a request (with a reference, put with its own client) or, with
 * req NULL, our own message in msg. A zero-copy Twrite also holds its data's pages, which QEMU reads
 * until it gives the token back. */
struct ws_tx {
	struct list_head node;
	struct p9_client *client;
	struct p9_req_t *req;
	struct scatterlist *sgl;	/* a zero-copy Twrite: its header, then its npages pages */
	struct page **pages;
	unsigned int npages;
	bool drop;			/* the pages are referenced: put them */
	u8 msg[WS_OWN_MAX];
};

/* The pages of a zero-copy request's data; references on them are put when drop. */
static void ws_unpin(struct page **pages, unsigned int npages, bool drop)
{
	unsigned int i;

	if (drop)
		for (i = 0; i < npages; i++)
			put_page(pages[i]);
	kvfree(pages);
}

/* A token never queued, or given back, with what it holds of a zero-copy Twrite. */
static void ws_tx_discard(struct ws_tx *t)
{
	if (!t)
		return;
	if (t->pages)
		ws_unpin(t->pages, t->npages, t->drop);
	kfree(t->sgl);
	kfree(t);
}

static void ws_tx_free(struct ws_tx *t)
{
	list_del(&t->node);
	if (t->req)
		p9_req_put(t->client, t->req);
	ws_tx_discard(t);
}

/* Takes back what QEMU has sent, and wakes a sender waiting for room (d->lock held). */
static void ws_reclaim_tx(struct ws_dev *d)
{
	struct ws_tx *t;
	unsigned int len;
	bool any = false;

	while ((t = virtqueue_get_buf(d->tx, &len)) != NULL) {
		ws_tx_free(t);
		any = true;
	}
	if (any) {
		d->tx_room = true;
		wake_up(&d->wait);
	}
}

static int ws_put_held(struct ws_dev *d, bool *put);

/* Queues t's request, or its own message of size bytes, after the quiet messages held before it, and
 * kicks the queue once; -ENOSPC if the queue has no room for all of them (d->lock held). */
static int ws_send(struct ws_dev *d, struct ws_tx *t, u32 size)
{
	struct scatterlist sg;
	bool put = false;
	int err;

	ws_reclaim_tx(d);
	err = ws_put_held(d, &put);
	if (err) {
		if (put)	/* what went on must reach QEMU, or it never gives room back */
			virtqueue_kick(d->tx);
		return err;
	}
	if (t->sgl)
		err = virtqueue_add_outbuf(d->tx, t->sgl, t->npages + 1, t, GFP_ATOMIC);
	else {
		if (t->req)
			sg_init_one(&sg, t->req->tc.sdata, t->req->tc.size);
		else
			sg_init_one(&sg, t->msg, size);
		err = virtqueue_add_outbuf(d->tx, &sg, 1, t, GFP_ATOMIC);
	}
	if (err == 0) {
		if (t->req)
			p9_req_get(t->req);
		list_add_tail(&t->node, &d->txs);
		/* a request's own size field: a zero-copy Twrite's counts its pages too */
		ws_tx_bytes += t->req ? get_unaligned_le32(t->req->tc.sdata) : size;
	}
	if (err == 0 || put)
		virtqueue_kick(d->tx);
	return err;
}

/*
 * Quiet messages (Twalkq, Tlopenq, Tclunkq: never answered) are held in the guest, in order, and go to
 * the transmit queue all at once: before the next request (which may name a fid they make), when
 * WS_QUIET_BATCH are held, or a tick later (kick_work). Each kick is an exit to QEMU, which under TCG
 * costs about a tenth of a millisecond, three a cached open; and a fid clunked while its clone walk is
 * still held was never needed by the host, so none of its messages go at all (ws_unsend): a cached
 * file opened, read from the page cache and closed costs the host nothing. Held messages are guest
 * memory, and go to whichever host the guest has: a checkpoint's freeze sends them first (the agent
 * writes "sync" after the guest's sync(2)), so the host's fid table at the instant has them.
 */

/* Puts the held messages on the transmit queue without a kick, *put set if any went; -ENOSPC, the rest
 * still held in order, if it is full (d->lock held). */
static int ws_put_held(struct ws_dev *d, bool *put)
{
	struct scatterlist sg;
	struct ws_tx *t, *tmp;
	int err = 0;

	list_for_each_entry_safe(t, tmp, &d->held, node) {
		u32 size = get_unaligned_le32(t->msg);

		sg_init_one(&sg, t->msg, size);
		err = virtqueue_add_outbuf(d->tx, &sg, 1, t, GFP_ATOMIC);
		if (err)
			break;
		list_move_tail(&t->node, &d->txs);
		d->nheld--;
		ws_tx_bytes += size;
		*put = true;
	}
	return err;
}

/* Puts the held messages on the transmit queue and kicks it; -ENOSPC, the rest still held in order,
 * if it is full (d->lock held). */
static int ws_send_held(struct ws_dev *d)
{
	bool put = false;
	int err = ws_put_held(d, &put);

	if (put)
		virtqueue_kick(d->tx);
	return err;
}

/* Forgets every held message: nothing will read them (d->lock held). */
static void ws_drop_held(struct ws_dev *d)
{
	struct ws_tx *t, *tmp;

	list_for_each_entry_safe(t, tmp, &d->held, node) {
		list_del(&t->node);
		ws_tx_discard(t);
	}
	d->nheld = 0;
}

/* Holds the quiet message in t (its size in its header); -ENOSPC, t not taken, while a full batch
 * cannot go to the transmit queue (d->lock held). */
static int ws_hold(struct ws_dev *d, struct ws_tx *t)
{
	if (d->nheld >= WS_QUIET_BATCH) {
		int err;

		ws_reclaim_tx(d);
		err = ws_send_held(d);
		if (err)
			return err;
	}
	list_add_tail(&t->node, &d->held);
	if (++d->nheld == 1)
		queue_delayed_work(system_highpri_wq, &d->kick_work, 1);
	return 0;
}

/*
 * A Tclunkq for fid: where the clone walk that made fid is still held, and no held walk clones fid in
 * turn, the host has never heard of this fid and never will: its walk and open are forgotten and
 * nothing is sent (true). Otherwise false: the clunk is to be held like any. Only what follows the
 * last held clunk of the number is this fid's: the client reuses numbers (d->lock held).
 */
static bool ws_unsend(struct ws_dev *d, u32 fid)
{
	struct ws_tx *t, *tmp, *made = NULL;
	bool cloned = false;

	list_for_each_entry(t, &d->held, node) {
		u8 type = t->msg[4];
		u32 f = get_unaligned_le32(t->msg + WS_HDR);

		if (type == WS_TCLUNKQ && f == fid) {
			made = NULL;	/* an earlier fid of the number ends here */
			cloned = false;
		} else if (type == WS_TWALKQ && f == fid) {
			cloned = true;	/* a held walk needs fid on the host */
		} else if (type == WS_TWALKQ && get_unaligned_le32(t->msg + WS_HDR + 4) == fid) {
			made = t;
		}
	}
	if (!made || cloned)
		return false;
	t = made;
	list_for_each_entry_safe_from(t, tmp, &d->held, node) {
		if ((t->msg[4] == WS_TWALKQ && get_unaligned_le32(t->msg + WS_HDR + 4) == fid) ||
		    (t->msg[4] == WS_TLOPENQ && get_unaligned_le32(t->msg + WS_HDR) == fid)) {
			list_del(&t->node);
			ws_tx_discard(t);
			d->nheld--;
		}
	}
	ws_quiet_unsent++;
	return true;
}

/* Sends the quiet messages no request has sent. */
static void ws_kick_work(struct work_struct *work)
{
	struct ws_dev *d = container_of(to_delayed_work(work), struct ws_dev, kick_work);
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	if (d->nheld && d->vdev) {
		ws_reclaim_tx(d);
		if (ws_send_held(d))	/* full: QEMU gives room back, and the next request or tick sends the rest */
			queue_delayed_work(system_highpri_wq, &d->kick_work, 1);
	}
	spin_unlock_irqrestore(&d->lock, flags);
}

/* Fails every request in flight: the connection is broken (d->lock held). */
static void ws_fail_all(struct ws_dev *d, int err)
{
	struct p9_req_t *req, *tmp;

	if (!d->err)
		d->err = err;
	wake_up(&d->wait);
	ws_drop_held(d);
	if (!d->client)
		return;
	d->client->status = Disconnected;
	list_for_each_entry_safe(req, tmp, &d->reqs, req_list) {
		list_del(&req->req_list);
		if (!req->t_err)
			req->t_err = err;
		p9_client_cb(d->client, req, REQ_STATUS_ERROR);
	}
}

/* One of our own messages, under NOTAG: its header, then body; false if it could not be queued (d->lock
 * held). */
static bool ws_send_own(struct ws_dev *d, u8 type, const void *body, u32 blen)
{
	struct ws_tx *t = kzalloc(sizeof(*t), GFP_ATOMIC);

	if (!t)
		return false;
	put_unaligned_le32(WS_HDR + blen, t->msg);
	t->msg[4] = type;
	put_unaligned_le16(P9_NOTAG, t->msg + 5);
	if (blen)
		memcpy(t->msg + WS_HDR, body, blen);
	if (ws_send(d, t, WS_HDR + blen)) {
		kfree(t);
		return false;
	}
	return true;
}

/* Once the mount's Rversion is in: the Tquiet, and the Twindow where the read window is open. Without
 * either, every Tclunk waits for its Rclunk, every Rread comes through the port (d->lock held). */
static void ws_after_rversion(struct ws_dev *d)
{
	if (!ws_send_own(d, WS_TQUIET, NULL, 0))
		return;
	d->quiet = WS_QUIET_ASKED;
	if (d->window)
		ws_send_own(d, WS_TWINDOW, NULL, 0);
}

/*
 * A zero-copy read in flight: the reply's first hdrlen bytes go to its request's buffer, the rest
 * (the data) to these pages. It lives on its caller's stack and is listed in d->zcs from the moment
 * its request is sent until its caller is done with it; a window read into its pages counts in
 * wreads, and the caller waits for those before it lets the pages go.
 */
struct ws_zc {
	struct list_head node;
	struct p9_req_t *req;
	struct page **pages;
	unsigned int npages;
	size_t offs;			/* where the data start in the first page */
	u32 len;			/* the bytes the pages hold */
	u32 hdrlen;
	bool drop;
	atomic_t wreads;
};

/* The zero-copy read of a request that is still sent, or NULL (d->lock held). */
static struct ws_zc *ws_zc_of(struct ws_dev *d, struct p9_req_t *req)
{
	struct ws_zc *zc;

	list_for_each_entry(zc, &d->zcs, node)
		if (zc->req == req)
			return zc;
	return NULL;
}

/* Copies n bytes of a reply's data, at offset at of the data, into its pages (any context). */
static void ws_zc_put(struct ws_zc *zc, u32 at, const u8 *p, u32 n)
{
	while (n > 0) {
		size_t pos = zc->offs + at;
		u32 off = pos & ~PAGE_MASK, k = min_t(u32, n, PAGE_SIZE - off);

		memcpy_to_page(zc->pages[pos >> PAGE_SHIFT], off, p, k);
		at += k;
		p += k;
		n -= k;
	}
}

/*
 * The pages of up to count bytes of it, from where it stands (it advances past them): user memory and
 * the page cache's pages referenced (*drop), a kernel buffer's looked up. Returns the bytes they hold,
 * which may be fewer than count (one segment of the iterator), or an error.
 */
static ssize_t ws_pin(struct iov_iter *it, size_t count, struct page ***pages, size_t *offs, bool *drop)
{
	unsigned int nr, i;
	size_t len;
	u8 *p;

	*pages = NULL;
	if (!iov_iter_count(it))
		return 0;
	if (!iov_iter_is_kvec(it)) {
		*drop = true;
		return iov_iter_get_pages_alloc2(it, pages, count, offs);
	}
	/* a kernel buffer (a directory's entries, an xattr): kmalloc'ed or vmalloc'ed, lives while we wait */
	*drop = false;
	while ((len = iov_iter_single_seg_count(it)) == 0)
		iov_iter_advance(it, 0);
	len = min(len, count);
	p = (u8 *)it->kvec->iov_base + it->iov_offset;
	*offs = offset_in_page(p);
	p -= *offs;
	nr = DIV_ROUND_UP(*offs + len, PAGE_SIZE);
	*pages = kvmalloc_array(nr, sizeof(struct page *), GFP_NOFS);
	if (!*pages)
		return -ENOMEM;
	for (i = 0; i < nr; i++, p += PAGE_SIZE)
		(*pages)[i] = is_vmalloc_addr(p) ? vmalloc_to_page(p) : kmap_to_page(p);
	iov_iter_advance(it, len);
	return len;
}

/* A read of the window for an Rreadw: the data go straight into the reader's pages. */
struct ws_wread {
	struct work_struct work;
	struct ws_dev *d;
	struct p9_client *client;
	struct p9_req_t *req;		/* a lookup reference */
	struct ws_zc *zc;		/* its pages */
	u32 count, slot, serial;
	atomic_t pending;		/* block requests not yet done, and one for their submitter */
	int err;
	u8 tail[SECTOR_SIZE];		/* the last, partial sector (the pages have no room for all of it) */
};

/* Gives the slot back (d->lock held). */
static void ws_return(struct ws_dev *d, u32 slot, u32 serial)
{
	u8 body[WS_TRETURN_SIZE - WS_HDR];

	put_unaligned_le32(slot, body);
	put_unaligned_le32(serial, body + 4);
	/* if it cannot be queued the host never reuses the slot, and a checkpoint waits for it in vain */
	ws_send_own(d, WS_TRETURN, body, sizeof(body));
}

/* Every block request of a window read is done: completes its request, gives the slot back. */
static void ws_wread_done(struct ws_wread *w)
{
	struct ws_dev *d = w->d;
	struct p9_req_t *req = w->req;
	struct ws_zc *zc = w->zc;
	u32 aligned = w->count & ~(SECTOR_SIZE - 1);
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	if (d->vdev)
		ws_return(d, w->slot, w->serial);
	if (req->status == REQ_STATUS_SENT) {
		list_del(&req->req_list);
		if (w->err) {
			req->t_err = w->err;
			p9_client_cb(w->client, req, REQ_STATUS_ERROR);
		} else {
			ws_zc_put(zc, aligned, w->tail, w->count - aligned);
			put_unaligned_le32(WS_RREAD_HDR + w->count, req->rc.sdata);
			req->rc.sdata[4] = P9_RREAD;
			put_unaligned_le32(w->count, req->rc.sdata + WS_HDR);
			req->rc.size = WS_RREAD_HDR + w->count;
			p9_client_cb(w->client, req, REQ_STATUS_RCVD);
		}
	}
	p9_req_put(w->client, req);
	/* under the lock, and the last we touch of them: a reader, a close or a remove waiting for this
	 * takes the lock before it frees the pages or d */
	if (atomic_dec_and_test(&zc->wreads))
		wake_up(&d->wait);
	if (atomic_dec_and_test(&d->nwin))
		wake_up(&d->wait);
	spin_unlock_irqrestore(&d->lock, flags);
	kfree(w);
}

static void ws_wread_put(struct ws_wread *w)
{
	if (atomic_dec_and_test(&w->pending))
		ws_wread_done(w);
}

static void ws_wread_end(struct bio *bio)
{
	struct ws_wread *w = bio->bi_private;
	int err = blk_status_to_errno(bio->bi_status);

	if (err)
		cmpxchg(&w->err, 0, err);
	bio_put(bio);
	ws_wread_put(w);
}

static void ws_wread_submit(struct ws_wread *w, struct bio *bio)
{
	bio->bi_private = w;
	bio->bi_end_io = ws_wread_end;
	atomic_inc(&w->pending);
	submit_bio(bio);
}

static void ws_wread_work(struct work_struct *work)
{
	struct ws_wread *w = container_of(work, struct ws_wread, work);
	struct ws_zc *zc = w->zc;
	u32 aligned = w->count & ~(SECTOR_SIZE - 1), at, k;
	sector_t sector = (sector_t)w->slot * WS_SLOT_SECTORS;
	struct bio *bio;

	atomic_set(&w->pending, 1);
	/* the reader's pages, at any offset: block requests of a whole number of sectors each; a sector
	 * may straddle two pages */
	for (at = 0; at < aligned; at += k) {
		u32 done, n;

		k = min_t(u32, aligned - at, WS_BIO_BYTES);
		bio = bio_alloc(w->d->window, DIV_ROUND_UP(k, PAGE_SIZE) + 1, REQ_OP_READ, GFP_NOIO);
		bio->bi_iter.bi_sector = sector + (at >> SECTOR_SHIFT);
		for (done = 0; done < k; done += n) {
			size_t pos = zc->offs + at + done;
			u32 off = pos & ~PAGE_MASK;

			n = min_t(u32, k - done, PAGE_SIZE - off);
			bio_add_page(bio, zc->pages[pos >> PAGE_SHIFT], n, off);
		}
		ws_wread_submit(w, bio);
	}
	if (w->count > aligned) {
		bio = bio_alloc(w->d->window, 1, REQ_OP_READ, GFP_NOIO);
		bio->bi_iter.bi_sector = sector + (aligned >> SECTOR_SHIFT);
		bio_add_page(bio, virt_to_page(w->tail), SECTOR_SIZE, offset_in_page(w->tail));
		ws_wread_submit(w, bio);
	}
	ws_wread_put(w);
}

/* The current reply is complete (d->lock held). */
static void ws_finish(struct ws_dev *d)
{
	struct p9_req_t *req = d->rreq;

	if (d->rnotice) {
		if (d->hdr[4] == WS_RNOTICE)
			ws_listings_drop(d);	/* the host changed something: no listing kept is sure */
		if (d->notice) {
			d->notice->place = d->place;
			list_add_tail(&d->notice->node, &d->notices);
			d->notice_bytes += d->notice->len + WS_HDR;
		}
		if (d->notice || d->notice_lost)
			queue_work(system_wq, &d->notice_work);
		d->notice = NULL;
		d->rnotice = false;
		d->have = 0;
		d->size = 0;
		return;
	}
	if (d->rreadw) {
		u32 count = get_unaligned_le32(d->body), slot = get_unaligned_le32(d->body + 4);
		u32 serial = get_unaligned_le32(d->body + 8);
		struct ws_wread *w = NULL;

		/* only a zero-copy read has the room (pages): any other is failed */
		if (req && d->rzc && count <= d->rzc->len && count <= WS_SLOT_SECTORS << SECTOR_SHIFT &&
		    slot < 4096)
			w = kzalloc(sizeof(*w), GFP_ATOMIC);
		if (w) {
			/* the request stays listed (an abort fails it); the lookup reference goes with w */
			w->d = d;
			w->client = d->client;
			w->req = req;
			w->zc = d->rzc;
			atomic_inc(&w->zc->wreads);
			w->count = count;
			w->slot = slot;
			w->serial = serial;
			INIT_WORK(&w->work, ws_wread_work);
			atomic_inc(&d->nwin);
			queue_work(system_highpri_wq, &w->work);
		} else {
			ws_return(d, slot, serial);
			if (req && req->status == REQ_STATUS_SENT) {
				list_del(&req->req_list);
				req->t_err = -EIO;
				p9_client_cb(d->client, req, REQ_STATUS_ERROR);
			}
			if (req)
				p9_req_put(d->client, req);
		}
		d->rreq = NULL;
		d->rzc = NULL;
		d->rreadw = false;
		d->have = 0;
		d->size = 0;
		return;
	}
	if (req) {
		/* a zero-copy reply's size counts the data in its pages too, as the client expects */
		req->rc.size = d->size;
		if (req->status == REQ_STATUS_SENT) {
			list_del(&req->req_list);
			if (req->tc.id == P9_TVERSION && d->hdr[4] == P9_RVERSION)
				ws_after_rversion(d);
			ws_listings_answered(d, req, d->hdr[4]);
			ws_changes_answered(d, req, d->hdr[4]);
			p9_client_cb(d->client, req, REQ_STATUS_RCVD);
		}
		p9_req_put(d->client, req);
	}
	d->rreq = NULL;
	d->rzc = NULL;
	d->have = 0;
	d->size = 0;
}

/* A header is in: finds whose reply it is (d->lock held). False: the stream is broken. */
static bool ws_header(struct ws_dev *d)
{
	u16 tag = get_unaligned_le16(d->hdr + 5);
	u8 type = d->hdr[4];
	struct p9_req_t *req, *flushed = NULL;

	d->size = get_unaligned_le32(d->hdr);
	if (d->size < WS_HDR || d->size > d->client->msize) {
		pr_err_ratelimited("kosa8_ws9p: a frame of %u bytes from the host; the mount is cut off\n", d->size);
		return false;
	}
	if (tag == P9_NOTAG && d->quiet == WS_QUIET_ASKED && (type == WS_RQUIET || type == P9_RLERROR)) {
		/* the answer to our Tquiet: an Rlerror is a daemon from before quiet clunks */
		d->quiet = type == WS_RQUIET ? WS_QUIET_YES : WS_QUIET_NO;
		return true;
	}
	if ((type == WS_RNOTICE || (type == WS_RSYNC && d->size == WS_SYNC_SIZE)) && tag == P9_NOTAG) {
		/* an Rsync goes in the notices' line: applied after every notice before it */
		d->rnotice = true;
		d->notice = NULL;
		if (type == WS_RSYNC || (d->sb && d->notice_bytes + d->size <= WS_NOTICES_MAX))
			d->notice = kmalloc(sizeof(*d->notice) + d->size - WS_HDR, GFP_ATOMIC | __GFP_NOWARN);
		if (d->notice) {
			d->notice->len = d->size - WS_HDR;
			d->notice->rsync = type == WS_RSYNC;
		} else if (d->sb) {
			d->notice_lost = true;
		}
		ws_notices++;
		if (!d->notice)
			ws_notice_drops++;
		d->rreq = NULL;
		d->rzc = NULL;
		return true;
	}
	if (type == WS_RREADW) {
		if (!d->window || d->size != WS_RREADW_SIZE) {
			pr_err_ratelimited("kosa8_ws9p: an Rreadw of %u bytes, never asked for; the mount is cut off\n",
					   d->size);
			return false;
		}
		d->rreadw = true;
	}
	req = p9_tag_lookup(d->client, tag);
	if (req && (req->status != REQ_STATUS_SENT || !req->rc.sdata)) {
		/* flushed or failed meanwhile: nobody waits for this reply */
		flushed = req;
		req = NULL;
	}
	if (!req && (!flushed || ws_is_change(flushed)))
		/* the reply to an unknown tag, or to a change flushed or failed: it may have changed any file */
		d->changed_floor = ++d->place;
	if (flushed)
		p9_req_put(d->client, flushed);
	d->rzc = req ? ws_zc_of(d, req) : NULL;
	if (req && d->size > (d->rzc ? d->rzc->hdrlen + d->rzc->len : req->rc.capacity)) {
		pr_err_ratelimited("kosa8_ws9p: a reply of %u bytes for tag %u, which has room for %zu\n",
				   d->size, tag, d->rzc ? d->rzc->hdrlen + d->rzc->len : req->rc.capacity);
		p9_req_put(d->client, req);
		d->rzc = NULL;
		return false;
	}
	if (req && !d->rreadw)
		memcpy(req->rc.sdata, d->hdr, WS_HDR);
	d->rreq = req;
	return true;
}

/* Bytes at offset have of a zero-copy reply: its header to the request's buffer, its data to the pages. */
static void ws_zc_take(struct p9_req_t *req, struct ws_zc *zc, u32 have, const u8 *p, u32 n)
{
	if (have < zc->hdrlen) {
		u32 k = min(n, zc->hdrlen - have);

		memcpy(req->rc.sdata + have, p, k);
		have += k;
		p += k;
		n -= k;
	}
	if (n > 0)
		ws_zc_put(zc, have - zc->hdrlen, p, n);
}

/* One received piece of the stream (d->lock held). */
static void ws_take(struct ws_dev *d, const u8 *p, u32 len)
{
	while (len > 0 && !d->err) {
		u32 n;

		if (d->have < WS_HDR) {
			n = min_t(u32, len, WS_HDR - d->have);
			memcpy(d->hdr + d->have, p, n);
			d->have += n;
			p += n;
			len -= n;
			if (d->have < WS_HDR)
				return;
			if (!ws_header(d)) {
				ws_fail_all(d, -EIO);
				return;
			}
		} else {
			n = min_t(u32, len, d->size - d->have);
			if (d->rnotice) {
				if (d->notice)
					memcpy(d->notice->data + d->have - WS_HDR, p, n);
			} else if (d->rreadw)
				memcpy(d->body + d->have - WS_HDR, p, n);
			else if (d->rzc)
				ws_zc_take(d->rreq, d->rzc, d->have, p, n);
			else if (d->rreq)
				memcpy(d->rreq->rc.sdata + d->have, p, n);
			d->have += n;
			p += n;
			len -= n;
		}
		if (d->have == d->size)
			ws_finish(d);
	}
}

static void ws_rx_done(struct virtqueue *vq)
{
	struct ws_dev *d = vq->vdev->priv;
	struct scatterlist sg;
	unsigned long flags;
	unsigned int len;
	void *buf;

	spin_lock_irqsave(&d->lock, flags);
	while ((buf = virtqueue_get_buf(vq, &len)) != NULL) {
		len = min_t(unsigned int, len, PAGE_SIZE);
		ws_rx_bytes += len;
		if (d->client && !d->err)
			ws_take(d, buf, len);
		sg_init_one(&sg, buf, PAGE_SIZE);
		virtqueue_add_inbuf(vq, &sg, 1, buf, GFP_ATOMIC);
	}
	ws_reclaim_tx(d);
	spin_unlock_irqrestore(&d->lock, flags);
	virtqueue_kick(vq);
}

/* Enabled only while a request waits for room in the transmit queue. */
static void ws_tx_done(struct virtqueue *vq)
{
	struct ws_dev *d = vq->vdev->priv;
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	virtqueue_disable_cb(vq);
	d->tx_room = true;
	ws_reclaim_tx(d);
	spin_unlock_irqrestore(&d->lock, flags);
}

/* A control message to QEMU about our port (d->lock held). */
static void ws_control(struct ws_dev *d, u16 event, u16 value)
{
	struct virtio_console_control *c;
	struct scatterlist sg;
	unsigned int len;
	void *used;

	while ((used = virtqueue_get_buf(d->ctx, &len)) != NULL)
		kfree(used);
	c = kmalloc(sizeof(*c), GFP_ATOMIC);
	if (!c) {
		pr_err("kosa8_ws9p: no memory for a control message; the port may not open\n");
		return;
	}
	c->id = cpu_to_virtio32(d->vdev, WS_PORT);
	c->event = cpu_to_virtio16(d->vdev, event);
	c->value = cpu_to_virtio16(d->vdev, value);
	sg_init_one(&sg, c, sizeof(*c));
	if (virtqueue_add_outbuf(d->ctx, &sg, 1, c, GFP_ATOMIC)) {
		kfree(c);
		return;
	}
	virtqueue_kick(d->ctx);
}

static void ws_ctl_done(struct virtqueue *vq)
{
	struct ws_dev *d = vq->vdev->priv;
	struct virtio_console_control *c;
	struct scatterlist sg;
	unsigned long flags;
	unsigned int len;

	spin_lock_irqsave(&d->lock, flags);
	while ((c = virtqueue_get_buf(vq, &len)) != NULL) {
		if (len >= sizeof(*c) && virtio32_to_cpu(d->vdev, c->id) == WS_PORT) {
			u16 event = virtio16_to_cpu(d->vdev, c->event);

			if (event == VIRTIO_CONSOLE_PORT_ADD) {
				ws_control(d, VIRTIO_CONSOLE_PORT_READY, 1);
				ws_control(d, VIRTIO_CONSOLE_PORT_OPEN, 1);
				d->open = true;
				wake_up(&d->wait);
			} else if (event == VIRTIO_CONSOLE_PORT_REMOVE) {
				d->open = false;
			}
		}
		sg_init_one(&sg, c, WS_CTL_SIZE);
		virtqueue_add_inbuf(vq, &sg, 1, c, GFP_ATOMIC);
	}
	spin_unlock_irqrestore(&d->lock, flags);
	virtqueue_kick(vq);
}

/* ------------------------------------------------------------------ the cache
 *
 * A mount made with cache=loose keeps the folder's dentries, attributes and pages in the guest; this part
 * keeps them true to the host (docs/workspace.md, "Caching in the guest"):
 *
 *   - the agent names the mount's root in "cache_root" once mounted; we tell the daemon (Tcache), and
 *     from then on it sends an Rnotice (NOTAG) for names that changed on the host: entries of dir[8]
 *     (the directory's qid path) nlen[2] name kind[1], and for a file there now its attributes, as a
 *     Tgetattr would answer them. Each is applied in process context: a cached dentry of the name whose
 *     file is gone or another is dropped (with what is cached beneath it); the cached inode of the file
 *     there now (found by its qid, with a dentry or without) gets the host's attributes and loses its
 *     pages, unless the guest writes it (open for writing, or pages not yet written back): the guest's
 *     own view of a file it writes stands. An inode is never taken out of the inode cache here: Linux
 *     evicts an unhashed inode without writing it back, and what a writer still had would be lost. An
 *     entry of dir 0, no name and kind 0, a notice that does not parse, or one we had no room for drops
 *     everything: every unused dentry, and every inode is marked to be evicted (written back first) once
 *     unused, its pages dropped where the guest does not write it;
 *   - writes reach the host within WS_FLUSH_EVERY (the page cache is written back that often), before
 *     any rename or link is sent (so the host never sees a file under its new name before its data),
 *     and at once on fsync. The kernel's own Tfsync after writing an inode back is answered here: a
 *     program's fsync(2) reaches the host's disk, the page cache's write-back its page cache.
 *
 * The super block is used only while the mount is alive: it is read under ws_mutex (ws_close clears it)
 * and pinned by an active reference while it is worked on.
 */

/* d->sb with its s_umount held for reading (an unmount waits for the caller's work, which ws_put_sb ends), or
 * NULL: not cached, or its mount is going. */
static struct super_block *ws_cached_sb(struct ws_dev *d)
{
	struct super_block *sb;
	unsigned long flags;

	mutex_lock(&ws_mutex);
	spin_lock_irqsave(&d->lock, flags);
	sb = d->sb;
	spin_unlock_irqrestore(&d->lock, flags);
	if (sb && !down_read_trylock(&sb->s_umount))
		sb = NULL;
	if (sb && (!(sb->s_flags & SB_ACTIVE) || !sb->s_root)) {
		up_read(&sb->s_umount);
		sb = NULL;
	}
	mutex_unlock(&ws_mutex);
	return sb;
}

static void ws_put_sb(struct super_block *sb)
{
	up_read(&sb->s_umount);
}

/* The notice being received is dropped (d->lock held): the stream starts again. */
static void ws_notice_reset(struct ws_dev *d)
{
	kfree(d->notice);
	d->notice = NULL;
	d->rnotice = false;
}

/*
 * The guest's own changes against the host's notices. A notice gives a file's attributes as the host read
 * them, and the daemon reads them with no request being served (dev.kosa8.workspace Dispatcher): a notice
 * shows every change of the guest's whose reply came before it, and none whose reply came after. So each
 * reply to a change takes the next place in the stream, each notice the place of the last change before
 * it, and a notice is not applied to a file the guest changed at a later place: the guest's view is the
 * newer. (Change times cannot order the two: the guest's clock stamps one, the host's the other, and under
 * TCG they part by more than the gap.) The latest change's place of 1,024 files is kept, by qid path; one
 * pushed out while a notice before it waits, or a reply nobody waits for (a flushed request's), raises a
 * floor every file is taken to have been changed at.
 */

/* The file or directory qpath changed at place (d->lock held). */
static void ws_changed(struct ws_dev *d, u64 qpath, u64 place)
{
	struct ws_changed *c = &d->changed[hash_64(qpath, WS_CHANGED_BITS)];

	if (c->qpath != qpath && c->place > d->settled)
		d->changed_floor = max(d->changed_floor, c->place);
	c->qpath = qpath;
	c->place = place;
}

/* The qid client's fid fidno was walked or opened to, into q; false if there is no such fid. Under the
 * client's lock, which p9_fid_destroy takes to take a fid out of the table before it frees it: a reply can
 * outlive its request's hold on the fid (a flush that failed), and the fid then be gone or its number reused
 * (then another file is named; the notice for the right one may then be applied: the rare case left). The
 * lock comes after d->lock, as in p9_req_put's. */
static bool ws_fid_qid(struct p9_client *client, u32 fidno, struct p9_qid *q)
{
	struct p9_fid *fid;
	unsigned long flags;
	bool found;

	spin_lock_irqsave(&client->lock, flags);
	fid = idr_find(&client->fids, fidno);
	found = fid != NULL;
	if (found)
		*q = fid->qid;
	spin_unlock_irqrestore(&client->lock, flags);
	return found;
}

/* What fid stands for changed at place (d->lock held). */
static void ws_changed_fid(struct ws_dev *d, u32 fidno, u64 place)
{
	struct p9_qid q;

	if (ws_fid_qid(d->client, fidno, &q))
		ws_changed(d, q.path, place);
	else
		d->changed_floor = place;
}

/* How a request may change the folder, by where it names what it changes: the requests ws_changes_answered
 * places, each listed once. */
enum ws_change {
	WS_NO_CHANGE,
	WS_CHANGES_FID,		/* its first fid's file */
	WS_CHANGES_TWO,		/* its first two fids': Tlink dfid[4] fid[4], Trename fid[4] dfid[4] */
	WS_CHANGES_RENAMEAT,	/* olddirfid[4] oldname[s] newdirfid[4] newname[s] */
	WS_CHANGES_MADE,	/* its directory's fid first; the reply's qid[13] is the new file's */
};

static enum ws_change ws_change_of(struct p9_req_t *req)
{
	switch (req->tc.id) {
	case P9_TLOPEN:
		return get_unaligned_le32(req->tc.sdata + WS_HDR + 4) & P9_DOTL_TRUNC ? WS_CHANGES_FID : WS_NO_CHANGE;
	case P9_TWRITE:
	case P9_TSETATTR:
	case P9_TREMOVE:
	case P9_TUNLINKAT:
		return WS_CHANGES_FID;
	case P9_TLINK:
	case P9_TRENAME:
		return WS_CHANGES_TWO;
	case P9_TRENAMEAT:
		return WS_CHANGES_RENAMEAT;
	case P9_TLCREATE:
	case P9_TMKDIR:
	case P9_TSYMLINK:
	case P9_TMKNOD:
		return WS_CHANGES_MADE;
	default:
		return WS_NO_CHANGE;
	}
}

/* Whether req may change a file or a name. */
static bool ws_is_change(struct p9_req_t *req)
{
	return ws_change_of(req) != WS_NO_CHANGE;
}

/* A reply to req came (d->lock held): a change takes the next place, for every file and directory it changed
 * that we can name (a made one's qid comes in its reply; a removed or moved name's file is not named: its
 * directory is, and a notice never gives a file the guest unlinked a link back). */
static void ws_changes_answered(struct ws_dev *d, struct p9_req_t *req, u8 rtype)
{
	const u8 *t = req->tc.sdata + WS_HDR;
	u64 place = d->place + 1;
	u16 n;

	switch (ws_change_of(req)) {
	case WS_NO_CHANGE:
		return;
	case WS_CHANGES_FID:
		ws_changed_fid(d, get_unaligned_le32(t), place);
		break;
	case WS_CHANGES_TWO:
		ws_changed_fid(d, get_unaligned_le32(t), place);
		ws_changed_fid(d, get_unaligned_le32(t + 4), place);
		break;
	case WS_CHANGES_RENAMEAT:
		ws_changed_fid(d, get_unaligned_le32(t), place);
		n = get_unaligned_le16(t + 4);
		if (WS_HDR + 10 + n <= req->tc.size)
			ws_changed_fid(d, get_unaligned_le32(t + 6 + n), place);
		else
			d->changed_floor = place;
		break;
	case WS_CHANGES_MADE:
		ws_changed_fid(d, get_unaligned_le32(t), place);
		if (rtype == req->tc.id + 1 && d->size >= WS_HDR + 13)
			ws_changed(d, get_unaligned_le64(req->rc.sdata + WS_HDR + 5), place);
		break;
	}
	d->place = place;
}

/* Whether the guest changed the file of qid path qpath after the notice at place (takes d->lock). */
static bool ws_changed_after(struct ws_dev *d, u64 qpath, u64 place)
{
	const struct ws_changed *c;
	unsigned long flags;
	bool after;

	spin_lock_irqsave(&d->lock, flags);
	c = &d->changed[hash_64(qpath, WS_CHANGED_BITS)];
	after = d->changed_floor > place || (c->qpath == qpath && c->place > place);
	spin_unlock_irqrestore(&d->lock, flags);
	return after;
}

/* Whether the guest writes inode: its own view of it stands (inode locked, or a check that may go stale). */
static bool ws_written(struct inode *inode)
{
	return S_ISREG(inode->i_mode) &&
	       (atomic_read(&inode->i_writecount) > 0 ||
		mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY) ||
		mapping_tagged(inode->i_mapping, PAGECACHE_TAG_WRITEBACK));
}

/* The host's attributes a (WS_NOTICE_ATTRS bytes) of the notice at place into the cached inode, its pages
 * dropped: unless the guest writes it or changed it after the notice (above), checked under the inode's lock,
 * which every write and setattr takes; a write-back under way has pages tagged. Such an inode is instead
 * marked to be evicted, written back first, once unused, so the next lookup reads it afresh from the host.
 * The file's type never changes here: another type is another file, whose dentry goes instead. */
static void ws_refresh_inode(struct ws_dev *d, struct inode *inode, const u8 *a, u64 place)
{
	bool kept = true;

	inode_lock(inode);
	if (ws_written(inode)) {
		d_mark_dontcache(inode);
	} else if (ws_changed_after(d, get_unaligned_le64(a), place)) {
		ws_behind++;
		d_mark_dontcache(inode);
	} else {
		kept = false;
		inode->i_mode = (inode->i_mode & S_IFMT) | (get_unaligned_le32(a + 9) & ~S_IFMT);
		i_uid_write(inode, get_unaligned_le32(a + 13));
		i_gid_write(inode, get_unaligned_le32(a + 17));
		/* no link left: its "gone" entry comes (0 would evict it unwritten); one the guest unlinked gets none
		 * back */
		if (get_unaligned_le64(a + 21) && inode->i_nlink)
			set_nlink(inode, get_unaligned_le64(a + 21));
		i_size_write(inode, get_unaligned_le64(a + 29));
		inode->i_blocks = get_unaligned_le64(a + 37);
		inode->i_atime.tv_sec = get_unaligned_le64(a + 45);
		inode->i_atime.tv_nsec = get_unaligned_le32(a + 53);
		inode->i_mtime.tv_sec = get_unaligned_le64(a + 57);
		inode->i_mtime.tv_nsec = get_unaligned_le32(a + 65);
		inode->i_ctime.tv_sec = get_unaligned_le64(a + 69);
		inode->i_ctime.tv_nsec = get_unaligned_le32(a + 77);
		if (S_ISREG(inode->i_mode))
			invalidate_inode_pages2(inode->i_mapping);
	}
	inode_unlock(inode);
	if (kept)	/* its unused names go now: the next lookup reads it afresh (once unused, it is evicted) */
		d_prune_aliases(inode);
}

/* The cached inode of qid path qpath, referenced, or NULL; the root's is the one not in the inode cache. */
static struct inode *ws_cached_inode(struct super_block *sb, u64 qpath)
{
	ino_t ino = (ino_t)(qpath + 2);		/* v9fs_qid2ino on a 64-bit kernel */

	if (ino == d_inode(sb->s_root)->i_ino)
		return igrab(d_inode(sb->s_root));
	return ilookup(sb, ino);
}

/* The name in the directory whose qid path is dir changed on the host; attrs: what is there now, or NULL. */
static void ws_stale_name(struct ws_dev *d, struct super_block *sb, u64 dir, const u8 *name, u16 nlen,
			  const u8 *attrs, u64 place)
{
	struct qstr q = QSTR_INIT((const char *)name, nlen);
	struct inode *di, *now = NULL;
	struct dentry *dd, *child;

	if (nlen == 0 || nlen > NAME_MAX || memchr(name, '/', nlen) || memchr(name, 0, nlen))
		return;
	if (attrs) {
		now = ws_cached_inode(sb, get_unaligned_le64(attrs));
		if (now && inode_wrong_type(now, get_unaligned_le32(attrs + 9))) {
			iput(now);	/* the number is another file's now: the inode is not this one */
			now = NULL;
		}
		if (now)
			ws_refresh_inode(d, now, attrs, place);
	}
	di = ws_cached_inode(sb, dir);
	dd = di ? d_find_alias(di) : NULL;
	if (dd) {
		child = d_hash_and_lookup(dd, &q);
		if (!IS_ERR_OR_NULL(child)) {
			/* a dentry of what is gone, or of another file than is there now, goes, and its inode is
			 * evicted once unused (written back first): the host may give its number to a new file */
			if (!now || d_inode(child) != now) {
				struct inode *old = d_inode(child) ? igrab(d_inode(child)) : NULL;

				d_invalidate(child);
				if (old) {
					d_mark_dontcache(old);
					iput(old);
				}
			}
			ws_stale_names++;
			dput(child);
		}
		dput(dd);
	}
	iput(di);
	iput(now);
}

/* Everything cached (fs/drop_caches.c's walk of the inodes): unused dentries go; every inode is marked to be
 * evicted once unused (written back first: I_DONTCACHE), and loses its pages where the guest does not write it. */
static void ws_drop_all(struct super_block *sb)
{
	struct inode *inode, *toput = NULL;

	ws_drops_all++;
	shrink_dcache_sb(sb);
	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		spin_lock(&inode->i_lock);
		if (inode->i_state & (I_NEW | I_FREEING | I_WILL_FREE)) {
			spin_unlock(&inode->i_lock);
			continue;
		}
		atomic_inc(&inode->i_count);	/* __iget: it stays on the list while we walk on */
		spin_unlock(&inode->i_lock);
		spin_unlock(&sb->s_inode_list_lock);
		if (inode != d_inode(sb->s_root)) {
			d_mark_dontcache(inode);
			inode_lock(inode);
			if (S_ISREG(inode->i_mode) && !ws_written(inode))
				invalidate_inode_pages2(inode->i_mapping);
			inode_unlock(inode);
		}
		iput(toput);
		toput = inode;
		cond_resched();
		spin_lock(&sb->s_inode_list_lock);
	}
	spin_unlock(&sb->s_inode_list_lock);
	iput(toput);
}

/* One Rnotice's entries, of the notice at place; false if it does not parse (the caller drops everything). */
static bool ws_apply_notice(struct ws_dev *d, struct super_block *sb, const u8 *p, u32 len, u64 place, bool *all)
{
	while (len >= WS_NOTICE_ENTRY) {
		u64 dir = get_unaligned_le64(p);
		u16 nlen = get_unaligned_le16(p + 8);
		u32 size = WS_NOTICE_ENTRY + nlen + 1;
		u8 kind;

		if (len < size)
			return false;
		kind = p[WS_NOTICE_ENTRY + nlen];
		if (kind == WS_NOTICE_FILE)
			size += WS_NOTICE_ATTRS;
		else if (kind != WS_NOTICE_GONE)
			return false;
		if (len < size)
			return false;
		if (dir == 0 && nlen == 0)
			*all = true;
		else if (!*all)
			ws_stale_name(d, sb, dir, p + WS_NOTICE_ENTRY, nlen,
				      kind == WS_NOTICE_FILE ? p + WS_NOTICE_ENTRY + nlen + 1 : NULL, place);
		p += size;
		len -= size;
		cond_resched();
	}
	return len == 0;
}

static void ws_notice_work(struct work_struct *work)
{
	struct ws_dev *d = container_of(work, struct ws_dev, notice_work);
	struct super_block *sb = ws_cached_sb(d);
	struct ws_notice *n, *tmp;
	unsigned long flags;
	LIST_HEAD(todo);
	bool all;

	spin_lock_irqsave(&d->lock, flags);
	list_splice_init(&d->notices, &todo);
	d->notice_bytes = 0;
	all = d->notice_lost;
	d->notice_lost = false;
	spin_unlock_irqrestore(&d->lock, flags);
	list_for_each_entry_safe(n, tmp, &todo, node) {
		if (n->rsync) {
			/* everything before it is applied first: what was dropped whole, too */
			if (sb && all)
				ws_drop_all(sb);
			all = false;
			WRITE_ONCE(d->sync_done, get_unaligned_le32(n->data));
			wake_up_all(&d->wait);
		} else if (sb && !ws_apply_notice(d, sb, n->data, n->len, n->place, &all)) {
			pr_warn_ratelimited("kosa8_ws9p: a notice that does not parse; dropping the folder's cache\n");
			all = true;
		}
		spin_lock_irqsave(&d->lock, flags);
		d->settled = max(d->settled, n->place);
		spin_unlock_irqrestore(&d->lock, flags);
		kfree(n);
	}
	if (sb) {
		if (all)
			ws_drop_all(sb);
		ws_put_sb(sb);
	}
}

/* Writes the cached mount's dirty pages to the host, and comes again while it is cached. */
static void ws_flush_work(struct work_struct *work)
{
	struct ws_dev *d = container_of(to_delayed_work(work), struct ws_dev, flush_work);
	struct super_block *sb = ws_cached_sb(d);

	if (!sb)
		return;		/* "cache_root" starts it again for the next cached mount */
	mutex_lock(&d->flushing);
	if (wb_has_dirty_io(&sb->s_bdi->wb))
		writeback_inodes_sb(sb, WB_REASON_SYNC);
	mutex_unlock(&d->flushing);
	ws_put_sb(sb);
	queue_delayed_work(system_long_wq, &d->flush_work, WS_FLUSH_EVERY);
}

/* Before a rename or link of client's: what the guest wrote is on the host first (caller's context). */
static void ws_flush_before(struct ws_dev *d, struct p9_client *client)
{
	struct super_block *sb;
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	/* the caller is in an operation on this very mount: its super block is alive */
	sb = d->client == client ? d->sb : NULL;
	spin_unlock_irqrestore(&d->lock, flags);
	/* every write done and waited for (WB_SYNC_ALL), the periodic flush's too; a trylock: a blocking one
	 * could wait behind a freeze that waits for this rename */
	if (sb && down_read_trylock(&sb->s_umount)) {
		mutex_lock(&d->flushing);
		sync_inodes_sb(sb);
		mutex_unlock(&d->flushing);
		up_read(&sb->s_umount);
	}
}

/* Whether root is the root of a mount of client's: v9fs keeps its fids in the dentry's d_fsdata, a list. Any
 * other 9p mount (a cut-off one of ours, another transport's) is refused: its super block would outlive what
 * ws_close clears. */
static bool ws_mounts_client(struct dentry *root, struct p9_client *client)
{
	struct p9_fid *fid;
	bool ours = false;

	spin_lock(&root->d_lock);
	hlist_for_each_entry(fid, (struct hlist_head *)&root->d_fsdata, dlist)
		if (fid->clnt == client) {
			ours = true;
			break;
		}
	spin_unlock(&root->d_lock);
	return ours;
}

/* "cache_root": the path of the mount's root, mounted with cache=loose; the daemon is told to send notices. */
static int ws_cache_root_set(const char *val, const struct kernel_param *kp)
{
	char *name = kstrdup(val, GFP_KERNEL);
	unsigned long flags;
	struct ws_dev *d;
	struct path p;
	int err;

	if (!name)
		return -ENOMEM;
	err = kern_path(strim(name), LOOKUP_DIRECTORY, &p);
	kfree(name);
	if (err)
		return err;
	if (p.dentry != p.mnt->mnt_root || p.dentry->d_sb->s_magic != V9FS_MAGIC) {
		path_put(&p);
		return -EINVAL;
	}
	mutex_lock(&ws_mutex);
	d = ws_the;
	err = -ENODEV;
	if (d) {
		spin_lock_irqsave(&d->lock, flags);
		err = -ENOTCONN;
		if (d->client && !d->err && ws_mounts_client(p.dentry, d->client)) {
			d->sb = p.dentry->d_sb;
			err = ws_send_own(d, WS_TCACHE, NULL, 0) ? 0 : -EIO;
			if (err)
				d->sb = NULL;
		}
		spin_unlock_irqrestore(&d->lock, flags);
		if (!err)
			queue_delayed_work(system_long_wq, &d->flush_work, WS_FLUSH_EVERY);
	}
	mutex_unlock(&ws_mutex);
	path_put(&p);
	return err;
}

/* "sync": returns once every change the host saw before now is applied to the cache (at most a second's
 * wait); at once where the mount does not cache. The agent writes it before each command it starts. */
static int ws_sync_set(const char *val, const struct kernel_param *kp)
{
	unsigned long flags;
	struct ws_dev *d;
	__le32 body;
	u32 seq = 0;
	bool sent = false, gone;
	int err;

	mutex_lock(&ws_mutex);
	d = ws_the;
	if (d) {
		spin_lock_irqsave(&d->lock, flags);
		if (d->sb && d->client && !d->err) {
			seq = ++d->sync_sent;
			body = cpu_to_le32(seq);
			sent = ws_send_own(d, WS_TSYNC, &body, sizeof(body));
			if (sent)
				d->nclients++;	/* d stays while we wait, whatever its device and mounts do */
		}
		spin_unlock_irqrestore(&d->lock, flags);
	}
	mutex_unlock(&ws_mutex);
	if (!sent)
		return seq ? -EIO : 0;
	err = wait_event_timeout(d->wait, (s32)(READ_ONCE(d->sync_done) - seq) >= 0 || READ_ONCE(d->err), HZ)
		? (READ_ONCE(d->err) ? -EIO : 0) : -ETIMEDOUT;
	mutex_lock(&ws_mutex);
	spin_lock_irqsave(&d->lock, flags);
	gone = --d->nclients == 0 && !d->vdev;
	spin_unlock_irqrestore(&d->lock, flags);
	if (gone)
		kvfree(d);
	mutex_unlock(&ws_mutex);
	return err;
}

static const struct kernel_param_ops ws_sync_ops = { .set = ws_sync_set };
module_param_cb(sync, &ws_sync_ops, NULL, 0200);
MODULE_PARM_DESC(sync, "write anything: wait until every change the host saw before now is in the cache");

static const struct kernel_param_ops ws_cache_root_ops = { .set = ws_cache_root_set };
module_param_cb(cache_root, &ws_cache_root_ops, NULL, 0200);
MODULE_PARM_DESC(cache_root, "the mount's root, mounted cache=loose: keep its cache true to the host");

/* ------------------------------------------------------------------ the directory listings
 *
 * On a cached mount the directory reads (Treaddir) are answered from what the host answered before, kept
 * by directory (its qid path) and offset: every directory read crosses to the host otherwise
 * (Linux's 9p client caches no listing), twice a directory. The fid of a directory opened for reading is
 * known by its Rlopen; a listing is kept only if nothing changed while it was read. Everything kept goes
 * at once when anything may have changed a directory: a request of the guest's that makes, removes,
 * moves or links a name (when sent and when answered), and every notice of the host's. Simple, and the
 * read-mostly work it is for (git status, grep -r, find) changes nothing meanwhile.
 */
struct ws_dirfid {
	struct hlist_node node;
	u32 fid;
	u64 qpath;
};

struct ws_listing {
	struct list_head node;
	u64 qpath;
	u64 offset;
	u32 len;			/* the count answered: the data's length, an answer to any count from it up */
	u8 data[];
};

/* Drops every listing kept (d->lock held). */
static void ws_listings_drop(struct ws_dev *d)
{
	struct ws_listing *l, *tmp;

	d->listing_gen++;
	list_for_each_entry_safe(l, tmp, &d->listings, node) {
		list_del(&l->node);
		kfree(l);
	}
	d->listing_bytes = 0;
}

/* Forgets every directory fid, and every listing (d->lock held): the mount ends or begins. */
static void ws_listings_reset(struct ws_dev *d)
{
	struct ws_dirfid *f;
	struct hlist_node *tmp;
	unsigned int b;

	for (b = 0; b < WS_DIRFIDS; b++)
		hlist_for_each_entry_safe(f, tmp, &d->dirfids[b], node) {
			hlist_del(&f->node);
			kfree(f);
		}
	ws_listings_drop(d);
}

static struct ws_dirfid *ws_dirfid(struct ws_dev *d, u32 fid)
{
	struct ws_dirfid *f;

	hlist_for_each_entry(f, &d->dirfids[fid % WS_DIRFIDS], node)
		if (f->fid == fid)
			return f;
	return NULL;
}

/* fid is no longer what it was: clunked, removed, or opened anew (d->lock held). */
static void ws_dirfid_forget(struct ws_dev *d, u32 fid)
{
	struct ws_dirfid *f = ws_dirfid(d, fid);

	if (f) {
		hlist_del(&f->node);
		kfree(f);
	}
}

/* Whether a request of this type may change a directory's listing. */
static bool ws_changes_names(u8 type)
{
	switch (type) {
	case P9_TLCREATE: case P9_TSYMLINK: case P9_TMKNOD: case P9_TRENAME: case P9_TRENAMEAT:
	case P9_TUNLINKAT: case P9_TMKDIR: case P9_TLINK: case P9_TREMOVE:
		return true;
	}
	return false;
}

/* A request is sent (d->lock held): what it changes of the fids and the listings. */
static void ws_listings_sent(struct ws_dev *d, struct p9_req_t *req)
{
	u8 type = req->tc.id;

	if (type == P9_TCLUNK || type == P9_TREMOVE || type == P9_TLOPEN)
		ws_dirfid_forget(d, get_unaligned_le32(req->tc.sdata + WS_HDR));
	if (ws_changes_names(type))
		ws_listings_drop(d);
}

/* A reply is in (d->lock held): a directory opened, or a change done. */
static void ws_listings_answered(struct ws_dev *d, struct p9_req_t *req, u8 rtype)
{
	struct ws_dirfid *f;

	if (!d->sb)
		return;
	if (ws_changes_names(req->tc.id))
		ws_listings_drop(d);
	/* Rlopen: qid type[1] version[4] path[8] after the header */
	if (req->tc.id == P9_TLOPEN && rtype == P9_RLOPEN && req->rc.size >= WS_HDR + 13 &&
	    (req->rc.sdata[WS_HDR] & P9_QTDIR)) {
		f = kmalloc(sizeof(*f), GFP_ATOMIC);
		if (f) {
			f->fid = get_unaligned_le32(req->tc.sdata + WS_HDR);
			f->qpath = get_unaligned_le64(req->rc.sdata + WS_HDR + 5);
			ws_dirfid_forget(d, f->fid);
			hlist_add_head(&f->node, &d->dirfids[f->fid % WS_DIRFIDS]);
		}
	}
}

/*
 * A Treaddir on a cached mount: answered here, into it, from a listing kept, if there is one (true; the
 * request is done). Otherwise *gen is the listings' generation now, for ws_listing_keep.
 */
static bool ws_listing_answer(struct ws_dev *d, struct p9_client *client, struct p9_req_t *req,
			      struct iov_iter *to, u32 asked, u32 *gen)
{
	u32 fid = get_unaligned_le32(req->tc.sdata + WS_HDR);
	u64 offset = get_unaligned_le64(req->tc.sdata + WS_HDR + 4);
	struct ws_listing *l, *hit = NULL;
	struct iov_iter saved;
	struct ws_dirfid *f;
	unsigned long flags;
	u8 *copy = NULL;
	u32 len = 0;

	spin_lock_irqsave(&d->lock, flags);
	*gen = d->listing_gen;
	f = d->sb && d->client == client ? ws_dirfid(d, fid) : NULL;
	if (f)
		list_for_each_entry(l, &d->listings, node)
			if (l->qpath == f->qpath && l->offset == offset && l->len <= asked) {
				hit = l;
				break;
			}
	if (hit) {
		list_move(&hit->node, &d->listings);	/* most recently used first */
		len = hit->len;
		copy = kmemdup(hit->data, len, GFP_ATOMIC | __GFP_NOWARN);
	}
	spin_unlock_irqrestore(&d->lock, flags);
	if (!hit || (len && !copy))
		return false;
	saved = *to;
	if (copy_to_iter(copy, len, to) != len) {
		*to = saved;	/* the host is asked instead, into the iterator as it was */
		kfree(copy);
		return false;
	}
	kfree(copy);
	put_unaligned_le32(WS_RREAD_HDR + len, req->rc.sdata);
	req->rc.sdata[4] = P9_RREADDIR;
	put_unaligned_le16(req->tc.tag, req->rc.sdata + 5);
	put_unaligned_le32(len, req->rc.sdata + WS_HDR);
	req->rc.size = WS_RREAD_HDR + len;
	ws_listing_hits++;
	p9_client_cb(client, req, REQ_STATUS_RCVD);
	return true;
}

/* A Treaddir answered by the host into pages (from offs): kept, if nothing changed since gen. */
static void ws_listing_keep(struct ws_dev *d, struct p9_client *client, struct p9_req_t *req, u32 asked,
			    u32 gen, struct page **pages, size_t offs)
{
	u32 fid = get_unaligned_le32(req->tc.sdata + WS_HDR);
	u64 offset = get_unaligned_le64(req->tc.sdata + WS_HDR + 4);
	struct ws_listing *l;
	struct ws_dirfid *f;
	unsigned long flags;
	u32 len, done = 0;

	if (req->rc.size < WS_RREAD_HDR || req->rc.sdata[4] != P9_RREADDIR)
		return;
	len = get_unaligned_le32(req->rc.sdata + WS_HDR);
	if (len > asked || len > req->rc.size - WS_RREAD_HDR)
		return;
	l = kmalloc(sizeof(*l) + len, GFP_NOFS);
	if (!l)
		return;
	while (done < len) {
		size_t at = offs + done;
		u32 k = min_t(size_t, len - done, PAGE_SIZE - at % PAGE_SIZE);
		u8 *p = kmap_local_page(pages[at / PAGE_SIZE]);

		memcpy(l->data + done, p + at % PAGE_SIZE, k);
		kunmap_local(p);
		done += k;
	}
	l->offset = offset;
	l->len = len;
	spin_lock_irqsave(&d->lock, flags);
	f = d->client == client ? ws_dirfid(d, fid) : NULL;
	if (f && d->listing_gen == gen && d->listing_bytes + len <= WS_LISTINGS_MAX) {
		l->qpath = f->qpath;
		list_add(&l->node, &d->listings);
		d->listing_bytes += len;
		l = NULL;
	}
	spin_unlock_irqrestore(&d->lock, flags);
	kfree(l);
}

/* ------------------------------------------------------------------ the transport */

/* Queues req by the token t (taken in any case), listing zc, its zero-copy read, with it. */
static int ws_queue(struct p9_client *client, struct p9_req_t *req, struct ws_tx *t, struct ws_zc *zc)
{
	struct ws_dev *d = client->trans;
	bool quiet = !t->sgl && !zc && req->tc.id == P9_TCLUNK && req->tc.size == WS_TCLUNKQ_SIZE;
	/* the page cache's write-back of an inode (the cache above), never a program's fsync */
	bool writeback = !t->sgl && !zc && req->tc.id == P9_TFSYNC && (current->flags & PF_KTHREAD);
	/* a clone walk (no names, a new fid): every open's first step */
	bool clone = !t->sgl && !zc && req->tc.id == P9_TWALK && req->tc.size == WS_TWALKQ_SIZE &&
		get_unaligned_le32(req->tc.sdata + WS_HDR) != get_unaligned_le32(req->tc.sdata + WS_HDR + 4);
	/* a read-only open (no write access, no truncation): most of a program's opens */
	bool ropen = !t->sgl && !zc && req->tc.id == P9_TLOPEN && req->tc.size == WS_TLOPENQ_SIZE &&
		!(get_unaligned_le32(req->tc.sdata + WS_HDR + 4) & (P9_OWRITE | P9_ORDWR | P9_DOTL_TRUNC));
	struct p9_qid qid;
	unsigned long flags;
	int err;

	t->client = client;
	for (;;) {
		spin_lock_irqsave(&d->lock, flags);
		if (d->err || d->client != client) {
			err = d->err ? d->err : -ECONNRESET;
			break;
		}
		if (writeback && d->sb && req->rc.capacity >= WS_HDR) {
			put_unaligned_le32(WS_HDR, req->rc.sdata);
			req->rc.sdata[4] = P9_RFSYNC;
			put_unaligned_le16(req->tc.tag, req->rc.sdata + 5);
			req->rc.size = WS_HDR;
			p9_client_cb(client, req, REQ_STATUS_RCVD);
			err = 0;
			break;
		}
		if (clone && d->sb && req->rc.capacity >= WS_RWALK_CLONE_SIZE) {
			/* a Twalkq for the daemon, which clones the fid in the order it reads (a daemon that
			 * caches knows it), and the empty Rwalk at once: a clone of a fid the kernel holds
			 * cannot fail but by a full fid table, and then the fid's next request fails */
			memcpy(t->msg, req->tc.sdata, WS_TWALKQ_SIZE);
			t->msg[4] = WS_TWALKQ;
			err = ws_hold(d, t);
			if (err == 0) {
				t = NULL;
				ws_quiet_walks++;
				put_unaligned_le32(WS_RWALK_CLONE_SIZE, req->rc.sdata);
				req->rc.sdata[4] = P9_RWALK;
				put_unaligned_le16(req->tc.tag, req->rc.sdata + 5);
				put_unaligned_le16(0, req->rc.sdata + WS_HDR);
				req->rc.size = WS_RWALK_CLONE_SIZE;
				p9_client_cb(client, req, REQ_STATUS_RCVD);
				break;
			}
		} else if (ropen && d->sb && req->rc.capacity >= WS_RLOPEN_SIZE &&
			   ws_fid_qid(client, get_unaligned_le32(req->tc.sdata + WS_HDR), &qid)) {
			/* a Tlopenq for the daemon, which opens the fid in the order it reads, and the Rlopen at
			 * once, with the qid the fid was walked to: the file is the guest's cached one, its
			 * pages and listings most often cached too. Where the host's open fails, the fid's
			 * next read answers the error (docs/workspace.md, "Quiet opens") */
			memcpy(t->msg, req->tc.sdata, WS_TLOPENQ_SIZE);
			t->msg[4] = WS_TLOPENQ;
			put_unaligned_le16(P9_NOTAG, t->msg + 5);	/* the tag is reused at once */
			err = ws_hold(d, t);
			if (err == 0) {
				u8 *r = req->rc.sdata;

				t = NULL;
				ws_quiet_opens++;
				ws_listings_sent(d, req);
				put_unaligned_le32(WS_RLOPEN_SIZE, r);
				r[4] = P9_RLOPEN;
				put_unaligned_le16(req->tc.tag, r + 5);
				r[WS_HDR] = qid.type;
				put_unaligned_le32(qid.version, r + WS_HDR + 1);
				put_unaligned_le64(qid.path, r + WS_HDR + 5);
				put_unaligned_le32(0, r + WS_HDR + 13);
				req->rc.size = WS_RLOPEN_SIZE;
				ws_listings_answered(d, req, P9_RLOPEN);
				p9_client_cb(client, req, REQ_STATUS_RCVD);
				break;
			}
		} else if (quiet && d->quiet == WS_QUIET_YES && req->rc.capacity >= WS_HDR) {
			/* a Tclunkq for the daemon, from our own copy (nothing tells us when QEMU has read a
			 * message without an answer), and the Rclunk at once: Linux forgets the fid whatever
			 * the answer says. A fid the host never heard of is forgotten here alone */
			memcpy(t->msg, req->tc.sdata, WS_TCLUNKQ_SIZE);
			t->msg[4] = WS_TCLUNKQ;
			if (ws_unsend(d, get_unaligned_le32(t->msg + WS_HDR))) {
				ws_tx_discard(t);
				err = 0;
			} else {
				err = ws_hold(d, t);
			}
			if (err == 0) {
				t = NULL;
				ws_quiet_clunks++;
				ws_listings_sent(d, req);
				put_unaligned_le32(WS_HDR, req->rc.sdata);
				req->rc.sdata[4] = P9_RCLUNK;
				put_unaligned_le16(req->tc.tag, req->rc.sdata + 5);
				req->rc.size = WS_HDR;
				p9_client_cb(client, req, REQ_STATUS_RCVD);
				break;
			}
		} else {
			/* sent and listed at once, under the lock: a reply is matched only to a listed request */
			WRITE_ONCE(req->status, REQ_STATUS_SENT);
			list_add_tail(&req->req_list, &d->reqs);
			t->req = req;
			err = ws_send(d, t, 0);
			if (err == 0) {
				ws_listings_sent(d, req);
				if (zc)
					list_add_tail(&zc->node, &d->zcs);
				t = NULL;
				break;
			}
			t->req = NULL;
			list_del(&req->req_list);
			WRITE_ONCE(req->status, REQ_STATUS_ALLOC);
		}
		if (err != -ENOSPC) {
			err = -EIO;
			break;
		}
		/* the transmit queue is full (all of it kicked): wait for QEMU to give some back */
		ws_tx_waits++;
		d->tx_room = false;
		if (!virtqueue_enable_cb(d->tx)) {
			virtqueue_disable_cb(d->tx);
			spin_unlock_irqrestore(&d->lock, flags);
			continue;
		}
		spin_unlock_irqrestore(&d->lock, flags);
		err = wait_event_killable(d->wait, READ_ONCE(d->tx_room) || READ_ONCE(d->err));
		if (err) {
			ws_tx_discard(t);
			return err;
		}
	}
	spin_unlock_irqrestore(&d->lock, flags);
	ws_tx_discard(t);
	return err;
}

static int ws_request(struct p9_client *client, struct p9_req_t *req)
{
	struct ws_tx *t = kzalloc(sizeof(*t), GFP_NOFS);

	if (!t)
		return -ENOMEM;
	if (req->tc.id == P9_TRENAMEAT || req->tc.id == P9_TRENAME || req->tc.id == P9_TLINK)
		ws_flush_before(client->trans, client);
	return ws_queue(client, req, t, NULL);
}

/*
 * A Tread, Treaddir or Twrite whose data stay where the caller has them (uidata to read into, uodata
 * to write from): its header in the request's buffer, the data in pages. Unlike request, this waits for
 * the reply itself. Pages are taken for one segment of the iterator (and for a write no more than the
 * transmit ring holds as descriptors); where that is less than asked for, the message's count says so,
 * and the client carries on from what the reply says was done.
 *
 * The request comes with two references (p9_tag_alloc's), and the client puts one whatever this
 * returns: the other is the reply's, put by its completion, or here where nothing was sent (as
 * trans_virtio does: no reply will come).
 */
static int ws_zc_request(struct p9_client *client, struct p9_req_t *req, struct iov_iter *uidata,
			 struct iov_iter *uodata, int inlen, int outlen, int in_hdr_len)
{
	struct ws_dev *d = client->trans;
	struct ws_zc zc = { .req = req, .hdrlen = in_hdr_len };
	bool reads = uidata && inlen > 0, user = reads && user_backed_iter(uidata);
	u32 gen = 0;
	unsigned long flags;
	struct ws_tx *t;
	unsigned int i;
	ssize_t n = 0;
	int err;

	/* the message is fid[4] offset[8] count[4]: its count is ours to set */
	if ((req->tc.id != P9_TREAD && req->tc.id != P9_TREADDIR && req->tc.id != P9_TWRITE) ||
	    req->tc.size != WS_COUNT_AT + 4 ||
	    (reads && (in_hdr_len < WS_RREAD_HDR || in_hdr_len > req->rc.capacity))) {
		err = -EINVAL;
		goto unsent;
	}
	if (req->tc.id == P9_TREADDIR && reads && ws_listing_answer(d, client, req, uidata, inlen, &gen))
		return 0;
	t = kzalloc(sizeof(*t), GFP_NOFS);
	if (!t) {
		err = -ENOMEM;
		goto unsent;
	}
	if (uodata && outlen > 0) {
		/* a descriptor a page and one for the header, within the ring (an indirect table may not
		 * be had, and then the chain goes in the ring itself) */
		size_t most = (virtqueue_get_vring_size(d->tx) - 2) * PAGE_SIZE, offs, left;
		bool drop;

		n = ws_pin(uodata, min_t(size_t, outlen, most), &t->pages, &offs, &drop);
		if (n <= 0) {
			ws_tx_discard(t);	/* (no pages are held: the array at most) */
			err = n < 0 ? n : -EFAULT;
			goto unsent;
		}
		t->drop = drop;
		t->npages = DIV_ROUND_UP(offs + n, PAGE_SIZE);
		t->sgl = kmalloc_array(t->npages + 1, sizeof(*t->sgl), GFP_NOFS);
		if (!t->sgl) {
			ws_tx_discard(t);
			err = -ENOMEM;
			goto unsent;
		}
		put_unaligned_le32(req->tc.size + n, req->tc.sdata);
		put_unaligned_le32(n, req->tc.sdata + WS_COUNT_AT);
		sg_init_table(t->sgl, t->npages + 1);
		sg_set_buf(&t->sgl[0], req->tc.sdata, req->tc.size);
		for (i = 0, left = n; i < t->npages; i++) {
			u32 k = min_t(size_t, left, PAGE_SIZE - offs);

			sg_set_page(&t->sgl[i + 1], t->pages[i], k, offs);
			left -= k;
			offs = 0;
		}
	} else if (reads) {
		n = ws_pin(uidata, inlen, &zc.pages, &zc.offs, &zc.drop);
		if (n <= 0) {
			kvfree(zc.pages);
			kfree(t);
			err = n < 0 ? n : -EFAULT;
			goto unsent;
		}
		zc.len = n;
		zc.npages = DIV_ROUND_UP(zc.offs + n, PAGE_SIZE);
		atomic_set(&zc.wreads, 0);
		put_unaligned_le32(n, req->tc.sdata + WS_COUNT_AT);
	}
	err = ws_queue(client, req, t, reads ? &zc : NULL);
	if (err) {
		if (reads)
			ws_unpin(zc.pages, zc.npages, zc.drop);
		/* killed before it could be sent: nothing to flush */
		err = err == -ERESTARTSYS ? -EINTR : err;
		goto unsent;
	}
	ws_zc_requests++;	/* racy, as the others: a statistic */
	err = wait_event_killable(req->wq, READ_ONCE(req->status) >= REQ_STATUS_RCVD);
	if (!reads) {
		if (err == 0 && READ_ONCE(req->status) == REQ_STATUS_RCVD) {
			u8 type;

			smp_rmb();	/* the reply before its status, as p9_client_cb orders them */
			type = req->rc.size >= WS_HDR ? req->rc.sdata[4] : 0;
			/* the client checks the count only against what it asked for, not what was sent:
			 * a larger one would make it unroll its iterator backwards */
			if (type != P9_RLERROR && (type != P9_RWRITE || req->rc.size < WS_RREAD_HDR ||
						   get_unaligned_le32(req->rc.sdata + WS_HDR) > n)) {
				pr_err_ratelimited("kosa8_ws9p: the host answered a Twrite of %zd bytes with a message of type %u; the mount is cut off\n",
						   n, type);
				err = -EIO;
			}
		}
		return err;
	}
	spin_lock_irqsave(&d->lock, flags);
	if (err == -ERESTARTSYS && req->status == REQ_STATUS_SENT) {
		/* killed: what the host still sends for it is dropped, as after a flush (the client
		 * flushes it next); this puts the reference its reply would have */
		list_del(&req->req_list);
		WRITE_ONCE(req->status, REQ_STATUS_FLSHD);
		p9_req_put(client, req);
	}
	list_del(&zc.node);
	if (d->rzc == &zc) {
		/* its reply is half in: the rest goes nowhere */
		p9_req_put(client, d->rreq);
		d->rreq = NULL;
		d->rzc = NULL;
	}
	spin_unlock_irqrestore(&d->lock, flags);
	/* a window read still filling the pages (an abort failed its request) ends soon: a local disk */
	wait_event(d->wait, atomic_read(&zc.wreads) == 0);
	if (user && err == 0)
		/* written behind the mapping's back: a page of a shared file mapping must be written out */
		for (i = 0; i < zc.npages; i++)
			if (!PageDirty(zc.pages[i]))	/* (a reused buffer's pages stay dirty) */
				set_page_dirty_lock(zc.pages[i]);
	if (err == 0 && req->tc.id == P9_TREADDIR && READ_ONCE(req->status) == REQ_STATUS_RCVD) {
		smp_rmb();	/* the reply before its status */
		ws_listing_keep(d, client, req, n, gen, zc.pages, zc.offs);
	}
	ws_unpin(zc.pages, zc.npages, zc.drop);
	return err;
unsent:
	p9_req_put(client, req);	/* the reference its reply would have put: none will come */
	return err;
}

static int ws_cancel(struct p9_client *client, struct p9_req_t *req)
{
	return 1;	/* it is on the queue: the client flushes it */
}

static int ws_cancelled(struct p9_client *client, struct p9_req_t *req)
{
	struct ws_dev *d = client->trans;
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	if (req->status != REQ_STATUS_SENT) {
		spin_unlock_irqrestore(&d->lock, flags);
		return 0;
	}
	list_del(&req->req_list);
	WRITE_ONCE(req->status, REQ_STATUS_FLSHD);
	spin_unlock_irqrestore(&d->lock, flags);
	p9_req_put(client, req);
	return 0;
}

static int ws_create(struct p9_client *client, const char *devname, char *args)
{
	struct ws_dev *d;
	unsigned long flags;
	int err = 0;

	mutex_lock(&ws_mutex);
	d = ws_the;
	if (!d) {
		err = -ENODEV;
		goto out;
	}
	if (!wait_event_timeout(d->wait, READ_ONCE(d->open), 10 * HZ)) {
		err = -ETIMEDOUT;
		goto out;
	}
	if (!d->window && ws_window[0]) {
		unsigned int major, minor;
		struct block_device *b;

		if (sscanf(ws_window, "%u:%u", &major, &minor) == 2) {
			b = blkdev_get_by_dev(MKDEV(major, minor), FMODE_READ, NULL);
			if (IS_ERR(b))
				pr_warn("kosa8_ws9p: cannot open the read window %s (%ld); reads go through the port\n",
					ws_window, PTR_ERR(b));
			else
				d->window = b;
		}
	}
	spin_lock_irqsave(&d->lock, flags);
	if (d->client && !d->err) {
		spin_unlock_irqrestore(&d->lock, flags);
		err = -EBUSY;	/* one live mount at a time */
		goto out;
	}
	/* a mount cut off by "abort" may live on (a process's working directory): it keeps nothing of ours */
	if (d->rreq)
		p9_req_put(d->client, d->rreq);
	d->client = client;
	d->err = 0;
	d->quiet = WS_QUIET_NO;
	d->have = 0;
	d->size = 0;
	d->rreq = NULL;
	d->rreadw = false;
	d->rzc = NULL;
	d->sb = NULL;		/* until the agent says this mount caches */
	ws_notice_reset(d);
	ws_listings_reset(d);
	while (!list_empty(&d->notices)) {	/* the previous mount's, not yet applied */
		struct ws_notice *n = list_first_entry(&d->notices, struct ws_notice, node);

		list_del(&n->node);
		kfree(n);
	}
	d->notice_bytes = 0;
	INIT_LIST_HEAD(&d->reqs);	/* (zcs is not: a cut-off mount's readers take theirs off it) */
	d->nclients++;
	spin_unlock_irqrestore(&d->lock, flags);
	client->trans = d;
	client->status = Connected;
out:
	mutex_unlock(&ws_mutex);
	return err;
}

/* Waits for every window read to end: each holds d, its request and the window's disk until then. A
 * read of a local disk ends; going on without it would free what it writes. */
static void ws_await_wreads(struct ws_dev *d, const char *what)
{
	while (!wait_event_timeout(d->wait, atomic_read(&d->nwin) == 0, 10 * HZ))
		pr_warn("kosa8_ws9p: window reads still in flight at %s; waiting for them\n", what);
}

/* Whether QEMU still holds something of client's (d->lock held). */
static bool ws_holds(struct ws_dev *d, struct p9_client *client)
{
	struct ws_tx *t;

	list_for_each_entry(t, &d->txs, node)
		if (t->client == client)
			return true;
	return false;
}

static void ws_close(struct p9_client *client)
{
	struct ws_dev *d = client->trans;
	unsigned long flags;
	struct ws_tx *t;
	bool gone, held;
	int i;

	if (!d)
		return;
	mutex_lock(&ws_mutex);
	spin_lock_irqsave(&d->lock, flags);
	if (d->client == client) {
		if (d->vdev && !d->err) {	/* the clunks held so far: the host closes what they name */
			ws_reclaim_tx(d);
			ws_send_held(d);
		}
		ws_fail_all(d, -ECONNRESET);
		if (d->rreq)
			p9_req_put(client, d->rreq);
		d->rreq = NULL;
		d->rzc = NULL;
		d->client = NULL;
		d->sb = NULL;
		ws_notice_reset(d);
		ws_listings_reset(d);
	}
	spin_unlock_irqrestore(&d->lock, flags);
	/* a window read holds its request until its block read completes */
	ws_await_wreads(d, "close");
	/* QEMU gives a request back once it has sent it; one whose host hangs keeps it. Wait a little,
	 * then leave such requests to QEMU: never freed (the client's clean-up warns of them), so QEMU
	 * never reads freed memory */
	for (i = 0; i < 200; i++) {
		spin_lock_irqsave(&d->lock, flags);
		if (d->vdev)
			ws_reclaim_tx(d);
		held = ws_holds(d, client);
		spin_unlock_irqrestore(&d->lock, flags);
		if (!held)
			break;
		msleep(10);
	}
	spin_lock_irqsave(&d->lock, flags);
	list_for_each_entry(t, &d->txs, node) {
		if (t->client == client) {
			pr_warn_ratelimited("kosa8_ws9p: the host never took a request; leaving it to QEMU\n");
			t->client = NULL;
			t->req = NULL;
		}
	}
	d->nclients--;
	gone = !d->vdev && d->nclients == 0;
	spin_unlock_irqrestore(&d->lock, flags);
	client->trans = NULL;
	if (gone)
		kvfree(d);
	mutex_unlock(&ws_mutex);
}

static struct p9_trans_module ws_trans = {
	.name = "kosa8",
	.maxsize = WS_MAXSIZE,
	.pooled_rbuffers = false,
	.def = 0,
	.owner = THIS_MODULE,
	.create = ws_create,
	.close = ws_close,
	.request = ws_request,
	.zc_request = ws_zc_request,
	.cancel = ws_cancel,
	.cancelled = ws_cancelled,
};

/* "abort": the daemon's server is gone; fails the mount's requests, now and later. */
static int ws_abort_set(const char *val, const struct kernel_param *kp)
{
	unsigned long flags;

	mutex_lock(&ws_mutex);
	if (ws_the) {
		spin_lock_irqsave(&ws_the->lock, flags);
		ws_fail_all(ws_the, -ECONNRESET);
		ws_the->sb = NULL;
		ws_notice_reset(ws_the);
		ws_listings_reset(ws_the);
		spin_unlock_irqrestore(&ws_the->lock, flags);
		wake_up(&ws_the->wait);
	}
	mutex_unlock(&ws_mutex);
	return 0;
}

static const struct kernel_param_ops ws_abort_ops = { .set = ws_abort_set };
module_param_cb(abort, &ws_abort_ops, NULL, 0200);
MODULE_PARM_DESC(abort, "write anything: fail the mount's requests (its server is gone)");

/* ------------------------------------------------------------------ the device */

static void ws_free_bufs(struct ws_dev *d)
{
	unsigned int i;

	if (d->bufs)
		for (i = 0; i < d->nbufs; i++)
			kfree(d->bufs[i]);
	kfree(d->bufs);
	d->bufs = NULL;
	for (i = 0; i < WS_CTL_BUFS; i++) {
		kfree(d->cbufs[i]);
		d->cbufs[i] = NULL;
	}
}

/* The device is reset: everything it held is ours again (d->lock held). */
static void ws_drain(struct ws_dev *d)
{
	struct ws_tx *t;
	void *used;

	ws_reclaim_tx(d);	/* the used ones first: detaching takes every other one */
	while ((t = virtqueue_detach_unused_buf(d->tx)) != NULL)
		ws_tx_free(t);
	while ((used = virtqueue_detach_unused_buf(d->ctx)) != NULL)
		kfree(used);
}

static int ws_probe(struct virtio_device *vdev)
{
	vq_callback_t *cbs[] = { NULL, NULL, ws_ctl_done, NULL, ws_rx_done, ws_tx_done };
	static const char * const names[] = { "p0-in", "p0-out", "ctl-in", "ctl-out", "ws9p-in", "ws9p-out" };
	struct virtqueue *vqs[6];
	struct scatterlist sg;
	unsigned long flags;
	struct ws_dev *d;
	unsigned int i;
	int err;

	if (!sysfs_streq(ws_claim, dev_name(&vdev->dev)))
		return -ENODEV;		/* not handed to us: virtio_console's */
	if (!virtio_has_feature(vdev, VIRTIO_CONSOLE_F_MULTIPORT))
		return -ENODEV;
	mutex_lock(&ws_mutex);
	if (ws_the) {
		err = -EBUSY;
		goto unlock;
	}
	d = kvzalloc(sizeof(*d), GFP_KERNEL);	/* ~17 KiB, changed[] most of it */
	if (!d) {
		err = -ENOMEM;
		goto unlock;
	}
	d->vdev = vdev;
	spin_lock_init(&d->lock);
	init_waitqueue_head(&d->wait);
	INIT_LIST_HEAD(&d->reqs);
	INIT_LIST_HEAD(&d->txs);
	INIT_LIST_HEAD(&d->held);
	INIT_LIST_HEAD(&d->zcs);
	INIT_LIST_HEAD(&d->notices);
	INIT_LIST_HEAD(&d->listings);
	INIT_WORK(&d->notice_work, ws_notice_work);
	INIT_DELAYED_WORK(&d->flush_work, ws_flush_work);
	INIT_DELAYED_WORK(&d->kick_work, ws_kick_work);
	mutex_init(&d->flushing);
	vdev->priv = d;
	/* port 0's queues, then the control queues, then port 1's (virtio-console's layout) */
	err = virtio_find_vqs(vdev, 6, vqs, cbs, names, NULL);
	if (err)
		goto free;
	d->crx = vqs[2];
	d->ctx = vqs[3];
	d->rx = vqs[4];
	d->tx = vqs[5];
	virtqueue_disable_cb(d->tx);
	d->nbufs = virtqueue_get_vring_size(d->rx);
	d->bufs = kcalloc(d->nbufs, sizeof(void *), GFP_KERNEL);
	err = -ENOMEM;
	if (!d->bufs)
		goto del;
	for (i = 0; i < d->nbufs; i++)
		if (!(d->bufs[i] = kmalloc(PAGE_SIZE, GFP_KERNEL)))
			goto del;
	for (i = 0; i < WS_CTL_BUFS; i++)
		if (!(d->cbufs[i] = kmalloc(WS_CTL_SIZE, GFP_KERNEL)))
			goto del;
	virtio_device_ready(vdev);
	for (i = 0; i < d->nbufs; i++) {
		sg_init_one(&sg, d->bufs[i], PAGE_SIZE);
		virtqueue_add_inbuf(d->rx, &sg, 1, d->bufs[i], GFP_KERNEL);
	}
	virtqueue_kick(d->rx);
	for (i = 0; i < WS_CTL_BUFS; i++) {
		sg_init_one(&sg, d->cbufs[i], WS_CTL_SIZE);
		virtqueue_add_inbuf(d->crx, &sg, 1, d->cbufs[i], GFP_KERNEL);
	}
	virtqueue_kick(d->crx);
	spin_lock_irqsave(&d->lock, flags);
	ws_control(d, VIRTIO_CONSOLE_DEVICE_READY, 1);	/* QEMU answers with a PORT_ADD per port */
	spin_unlock_irqrestore(&d->lock, flags);
	ws_the = d;
	mutex_unlock(&ws_mutex);
	dev_info(&vdev->dev, "kosa8_ws9p: the workspace's 9p transport (\"kosa8\")\n");
	return 0;
del:
	virtio_reset_device(vdev);
	vdev->config->del_vqs(vdev);
free:
	ws_free_bufs(d);
	kvfree(d);
unlock:
	mutex_unlock(&ws_mutex);
	return err;
}

static void ws_remove(struct virtio_device *vdev)
{
	struct ws_dev *d = vdev->priv;
	unsigned long flags;
	bool inuse;

	mutex_lock(&ws_mutex);
	ws_await_wreads(d, "removal");
	virtio_reset_device(vdev);
	spin_lock_irqsave(&d->lock, flags);
	ws_fail_all(d, -ENODEV);
	if (d->rreq)
		p9_req_put(d->client, d->rreq);
	d->rreq = NULL;
	d->rzc = NULL;
	ws_drain(d);
	d->vdev = NULL;
	d->sb = NULL;
	ws_notice_reset(d);
	ws_listings_reset(d);
	d->nclients++;		/* d stays while the cache's work is waited for, whatever its mounts do */
	spin_unlock_irqrestore(&d->lock, flags);
	vdev->config->del_vqs(vdev);
	ws_free_bufs(d);
	if (d->window)
		blkdev_put(d->window, FMODE_READ);
	d->window = NULL;
	ws_the = NULL;
	mutex_unlock(&ws_mutex);
	/* the cache's work takes ws_mutex: waited for outside it; with d->sb gone, neither comes again */
	cancel_delayed_work_sync(&d->flush_work);
	cancel_delayed_work_sync(&d->kick_work);
	cancel_work_sync(&d->notice_work);
	ws_notice_work(&d->notice_work);	/* frees what is left listed */
	mutex_lock(&ws_mutex);
	spin_lock_irqsave(&d->lock, flags);
	inuse = --d->nclients > 0;
	spin_unlock_irqrestore(&d->lock, flags);
	if (!inuse)
		kvfree(d);	/* else its mount frees it when it closes */
	mutex_unlock(&ws_mutex);
}

static unsigned int ws_features[] = { VIRTIO_CONSOLE_F_MULTIPORT };

static const struct virtio_device_id ws_ids[] = {
	{ VIRTIO_ID_CONSOLE, VIRTIO_DEV_ANY_ID },
	{ 0 },
};

static struct virtio_driver ws_driver = {
	.driver.name = KBUILD_MODNAME,
	.driver.owner = THIS_MODULE,
	.id_table = ws_ids,
	.feature_table = ws_features,
	.feature_table_size = ARRAY_SIZE(ws_features),
	.probe = ws_probe,
	.remove = ws_remove,
};

static int __init ws_init(void)
{
	int err = register_virtio_driver(&ws_driver);

	if (err)
		return err;
	v9fs_register_trans(&ws_trans);
	return 0;
}

static void __exit ws_exit(void)
{
	v9fs_unregister_trans(&ws_trans);
	unregister_virtio_driver(&ws_driver);
}

module_init(ws_init);
module_exit(ws_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("kosa8");
MODULE_DESCRIPTION("kosa8: 9p transport over the workspace's virtio-serial port");
