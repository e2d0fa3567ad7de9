// The pod sandbox ("pause") image's only binary; standard library only.
module ddp3d.io/cluster/pause

go 1.26.0
